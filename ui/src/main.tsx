import { render } from "preact";
import { App } from "./App";
import { store } from "./store";
import { desktop } from "./transport";
import "./styles.css";

render(<App />, document.getElementById("app")!);
void store.start();
// The desktop app makes its windows on demand and measures how long one takes to open
// (scripts/desktop-footprint.sh): two frames after the first render, the page is on screen.
requestAnimationFrame(() => requestAnimationFrame(() => void desktop?.pageRendered().catch(() => {})));
