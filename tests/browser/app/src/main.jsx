// The React app the browser extension's tests share: built by Vite in development mode
// (tests/browser/support.mjs), so React keeps the component names, props and state the
// extension reads through the DevTools hook.
import { createRoot } from "react-dom/client";
import { App } from "./App.jsx";

createRoot(document.getElementById("root")).render(<App />);
