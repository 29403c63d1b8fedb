import { render } from "preact";
import { App } from "./App";
import { store } from "./store";
import "./styles.css";

render(<App />, document.getElementById("app")!);
void store.start();
