import { Component, useState } from "react";

/** A function component with props and useState: the picked item's owner in the tests. */
export function TodoList({ title, items }) {
  const [done, setDone] = useState(["bread"]);
  const toggle = (item) => setDone((d) => (d.includes(item) ? d.filter((x) => x !== item) : [...d, item]));
  return (
    <section className="card todo" aria-labelledby="todo-title">
      <h2 id="todo-title">{title}</h2>
      <ul>
        {items.map((item) => (
          <li key={item} data-item={item} className={done.includes(item) ? "done" : ""} onClick={() => toggle(item)}>
            {item}
          </li>
        ))}
      </ul>
      <p className="summary">
        {done.length} of {items.length} done
      </p>
    </section>
  );
}

/** A class component with state. */
export class Counter extends Component {
  constructor(props) {
    super(props);
    this.state = { count: props.start };
  }
  render() {
    return (
      <section className="card counter">
        <h2>{this.props.label}</h2>
        <output id="count">{this.state.count}</output>
        <button id="increment" onClick={() => this.setState(({ count }) => ({ count: count + 1 }))}>
          Add one
        </button>
      </section>
    );
  }
}

/**
 * A closed port on this machine for the refused fetch: the test names one it bound and
 * closed (`?refused=PORT`). Not port 1: Chromium blocks it before connecting (ERR_UNSAFE_PORT).
 */
const REFUSED_URL = `http://127.0.0.1:${new URLSearchParams(location.search).get("refused") ?? "65535"}/`;

/** The buttons that make the errors the extension reports: a console error and two failed fetches. */
function Troubles() {
  const [last, setLast] = useState("nothing yet");
  const fetchAndSay = (url) =>
    fetch(url).then(
      (r) => setLast(`${url}: ${r.status}`),
      (e) => setLast(`${url}: ${e.message}`),
    );
  return (
    <section className="card troubles">
      <h2>Troubles</h2>
      <button id="log-error" onClick={() => console.error("boom from the app")}>
        Log an error
      </button>
      <button id="fetch-missing" onClick={() => fetchAndSay("/missing.json")}>
        Fetch a missing file
      </button>
      <button id="fetch-refused" onClick={() => fetchAndSay(REFUSED_URL)}>
        Fetch a closed port
      </button>
      <p id="last-fetch">{last}</p>
    </section>
  );
}

/** An input and a button whose click changes visible text: what the action tools change. */
function Greeter() {
  const [name, setName] = useState("");
  const [greeting, setGreeting] = useState("Nobody greeted yet");
  return (
    <section className="card greeter">
      <h2>Greeter</h2>
      <label>
        Name <input id="name" value={name} onChange={(e) => setName(e.target.value)} />
      </label>
      <button id="greet" onClick={() => setGreeting(`Hello, ${name || "stranger"}!`)}>
        Greet
      </button>
      <p id="greeting">{greeting}</p>
    </section>
  );
}

export function App() {
  return (
    <main>
      <h1>Tap test app</h1>
      <div className="grid">
        <TodoList title="Groceries" items={["apples", "bread", "milk"]} />
        <Counter label="Clicks" start={3} />
        <Troubles />
        <Greeter />
      </div>
    </main>
  );
}
