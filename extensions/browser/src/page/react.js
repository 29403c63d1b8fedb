// MAIN world, after values.js and before main.js. React: DOM elements rendered by React
// carry an expando `__reactFiber$<random>` (React 17, 18, 19; dev and prod builds) that only
// this world sees. From it we walk to the nearest component fiber and report its name,
// props, state, hooks, owners and child components (`reactTree`, part of `__tapMain`).
//
// When no `__REACT_DEVTOOLS_GLOBAL_HOOK__` exists yet (we ran before React), a minimal one is
// defined on Window.prototype, not on window: React finds it through the global scope (and
// then reports its renderers and committed roots to us), while the React DevTools extension,
// which installs its own hook only when `window.hasOwnProperty(...)` is false, still installs
// and wins. An existing hook (DevTools', Vite's react-refresh) is only read.
//
// isolated.js's inspector asks for the summary of an element it picked with a CustomEvent
// `__tap_react__` dispatched on that element (detail: JSON `{id}`); this answers synchronously
// with `__tap_react_reply__` on `document` (detail: JSON `{id, react}` or `{id, error}`) and
// remembers the element as `reactTree`'s default target.
(() => {
  "use strict";
  if (Object.prototype.hasOwnProperty.call(globalThis, "__tapMain")) return; // already injected (main.js defines it last)
  const parts = globalThis.__tapMainParts;
  if (!parts?.values) return;
  const { L, stringify, dispatch, PageError, cut, errorOf, typeName, serialize } = parts.values;

  const HOOK = "__REACT_DEVTOOLS_GLOBAL_HOOK__";
  const committedRoots = new Set();
  if (!(HOOK in globalThis)) {
    // See the header: on the prototype, so the React DevTools extension can still install its own.
    const renderers = new Map();
    const hook = {
      renderers,
      supportsFiber: true,
      inject(renderer) {
        const id = renderers.size + 1;
        renderers.set(id, renderer);
        return id;
      },
      onScheduleFiberRoot() {},
      onCommitFiberRoot(_id, root) {
        if (committedRoots.size < L("MAX_REACT_ROOTS")) committedRoots.add(root);
      },
      onCommitFiberUnmount() {},
      onPostCommitFiberRoot() {},
      checkDCE() {},
    };
    try {
      Object.defineProperty(Object.getPrototypeOf(globalThis), HOOK, { value: hook, configurable: true, writable: true });
    } catch {
      // a page that froze Window.prototype: we still read fibers from the DOM
    }
  }

  const FUNCTION = 0;
  const CLASS = 1;
  const INDETERMINATE = 2; // React ≤ 18: a function component before its first render
  const HOST_ROOT = 3;
  const FORWARD_REF = 11;
  const MEMO = 14;
  const SIMPLE_MEMO = 15;
  const COMPONENT_TAGS = new Set([FUNCTION, CLASS, INDETERMINATE, FORWARD_REF, MEMO, SIMPLE_MEMO]);
  const KIND = { 0: "function", 1: "class", 2: "function", 11: "forwardRef", 14: "memo", 15: "memo" };

  function expando(node, prefixes) {
    for (const k of Object.keys(node)) {
      for (const p of prefixes) if (k.startsWith(p)) return node[k];
    }
    return undefined;
  }

  /** A host fiber of the nearest React-rendered element at or above `el` (either of its two alternates). */
  function hostFiber(el) {
    let node = el;
    for (let steps = 0; node && steps < L("MAX_REACT_FIBER_STEPS"); steps++) {
      const fiber = expando(node, ["__reactFiber$", "__reactInternalInstance$"]);
      if (fiber) return fiber;
      node = node.parentNode || (node instanceof ShadowRoot ? node.host : null);
    }
    return null;
  }

  /**
   * Which of a fiber and its alternate is the committed one. The DOM expando keeps the fiber
   * of the first render, and after updates its props and state are stale; this is React's own
   * findCurrentFiberUsingSlowPath (react-reconciler's ReactFiberTreeReflection): climb both
   * alternates' parents to the root and see which child the committed tree holds.
   */
  function committed(fiber) {
    const alternate = fiber.alternate;
    if (!alternate) return fiber;
    let a = fiber;
    let b = alternate;
    const findIn = (parent, x, y) => {
      for (let c = parent.child, i = 0; c && i < L("MAX_REACT_FIBER_STEPS"); c = c.sibling, i++) {
        if (c === x) return x;
        if (c === y) return y;
      }
      return null;
    };
    for (let steps = 0; steps < L("MAX_REACT_FIBER_STEPS"); steps++) {
      const parentA = a.return;
      if (!parentA) break;
      const parentB = parentA.alternate;
      if (!parentB) {
        if (!parentA.return) break;
        a = b = parentA.return;
        continue;
      }
      if (parentA.child === parentB.child) {
        // Both parents hold the same child list: the alternate found there is the committed one.
        const found = findIn(parentA, a, b);
        return found === b ? alternate : fiber;
      }
      if (a.return !== b.return) {
        a = parentA;
        b = parentB;
      } else {
        // Same parent pointer: whichever parent lists `a` (or `b`) pairs with it.
        const inA = findIn(parentA, a, b);
        const inB = inA ? null : findIn(parentB, a, b);
        if (inA === a || inB === b) [a, b] = [parentA, parentB];
        else if (inA === b || inB === a) [a, b] = [parentB, parentA];
        else break; // unmounted
      }
    }
    return a.tag === HOST_ROOT && a.stateNode?.current !== a ? alternate : fiber;
  }

  function componentAbove(fiber) {
    for (let steps = 0; fiber && steps < L("MAX_REACT_FIBER_STEPS"); steps++) {
      if (COMPONENT_TAGS.has(fiber.tag)) return committed(fiber);
      fiber = fiber.return;
    }
    return null;
  }

  function componentName(fiber) {
    if (fiber.tag === FORWARD_REF) return fiber.type?.displayName || typeName(fiber.type?.render) || "ForwardRef";
    if (fiber.tag === SIMPLE_MEMO) return fiber.elementType?.displayName || typeName(fiber.type);
    return typeName(fiber.type);
  }

  function hookKind(h) {
    const s = h.memoizedState;
    if (h.queue && typeof h.queue.lastRenderedReducer === "function") return "state";
    if (h.queue && typeof h.queue.getSnapshot === "function") return "syncExternalStore";
    if (s && typeof s === "object") {
      if ("create" in s && "deps" in s && "tag" in s) return "effect";
      if (!Array.isArray(s) && Object.keys(s).length === 1 && "current" in s) return "ref";
      if (Array.isArray(s) && s.length === 2 && (s[1] === null || Array.isArray(s[1]))) {
        return typeof s[0] === "function" ? "callback" : "memo";
      }
    }
    return "other";
  }

  function hooksOf(fiber) {
    const hooks = [];
    let h = fiber.memoizedState;
    let more = false;
    while (h && typeof h === "object" && "next" in h) {
      if (hooks.length >= L("MAX_REACT_HOOKS")) {
        more = true;
        break;
      }
      const kind = hookKind(h);
      const s = h.memoizedState;
      let value;
      if (kind === "effect") value = { deps: serialize(s.deps) };
      else if (kind === "ref") value = serialize(s.current);
      else if (kind === "memo" || kind === "callback") value = serialize(s[0]);
      else value = serialize(s);
      hooks.push({ kind, value });
      h = h.next;
    }
    return { hooks, more };
  }

  /** Class: `this.state`. Function: the useState/useReducer values in call order. */
  function stateOf(fiber) {
    if (fiber.tag === CLASS) return serialize(fiber.memoizedState);
    if (fiber.tag === MEMO) return null; // its state lives on the wrapped component's fiber
    const values = [];
    let h = fiber.memoizedState;
    for (let i = 0; h && typeof h === "object" && "next" in h && i < L("MAX_REACT_HOOKS"); i++) {
      if (hookKind(h) === "state") values.push(serialize(h.memoizedState));
      h = h.next;
    }
    return values;
  }

  /**
   * Who rendered this component: `_debugOwner` in development builds (a fiber, or in React 19
   * a server component's info with a `name`); production builds keep no owners, so there the
   * chain is the enclosing components instead.
   */
  function owners(fiber) {
    const out = [];
    const max = L("MAX_REACT_OWNERS");
    if ("_debugOwner" in fiber) {
      let o = fiber._debugOwner;
      while (o && out.length < max) {
        if (typeof o.tag === "number") out.push({ name: componentName(o), props: committed(o).memoizedProps });
        else out.push({ name: String(o.name ?? "Anonymous"), props: o.props });
        o = o._debugOwner ?? o.owner;
      }
    } else {
      let p = componentAbove(fiber.return);
      while (p && out.length < max) {
        out.push({ name: componentName(p), props: p.memoizedProps });
        p = componentAbove(p.return);
      }
    }
    return out;
  }

  /** Component fibers below `fiber` (host elements skipped), nested, bounded in depth and count. */
  function childComponents(fiber) {
    let budget = L("MAX_REACT_CHILDREN");
    let steps = L("MAX_REACT_FIBER_STEPS");
    const collect = (parent, depth) => {
      const out = [];
      const stack = parent.child ? [parent.child] : [];
      while (stack.length && budget > 0 && steps-- > 0) {
        const f = stack.pop();
        if (f.sibling) stack.push(f.sibling);
        if (COMPONENT_TAGS.has(f.tag) && f.tag !== MEMO) {
          budget--;
          const node = { component: componentName(f), kind: KIND[f.tag] };
          if (f.key != null) node.key = cut(f.key, L("MAX_VALUE_STRING_CHARS"));
          if (depth + 1 < L("MAX_REACT_CHILD_DEPTH")) {
            const kids = collect(f, depth + 1);
            if (kids.length) node.children = kids;
          } else if (f.child) {
            node.children = "…";
          }
          out.push(node);
        } else if (f.child) {
          stack.push(f.child);
        }
      }
      return out;
    };
    return collect(fiber, 0);
  }

  function reactOnPage() {
    const hook = globalThis[HOOK];
    try {
      if (hook?.renderers?.size > 0) return true;
    } catch {
      // a page's odd hook object
    }
    return rootFibers(1).roots.length > 0;
  }

  /**
   * HostRoot fibers of the page: from our hook's commits, else from the containers' expandos.
   * `cut`: the walk stopped at MAX_REACT_ROOT_SCAN elements, so a root further on was not seen.
   */
  function rootFibers(max) {
    const roots = [];
    for (const r of committedRoots) {
      if (roots.length >= max) return { roots, cut: false };
      if (r?.current) roots.push(r.current);
    }
    const walker = document.createTreeWalker(document.documentElement ?? document, NodeFilter.SHOW_ELEMENT);
    let n = walker.currentNode;
    for (let i = 0; n && i < L("MAX_REACT_ROOT_SCAN") && roots.length < max; n = walker.nextNode(), i++) {
      const container = expando(n, ["__reactContainer$"]) ?? n._reactRootContainer?._internalRoot?.current;
      const current = container?.stateNode?.current ?? container;
      if (current && current.tag === HOST_ROOT && !roots.includes(current)) roots.push(current);
    }
    return { roots, cut: Boolean(n) && roots.length < max };
  }

  function firstComponent(root) {
    const stack = [root.child];
    for (let steps = 0; stack.length && steps < L("MAX_REACT_FIBER_STEPS"); steps++) {
      const f = stack.pop();
      if (!f) continue;
      if (COMPONENT_TAGS.has(f.tag)) return f;
      if (f.sibling) stack.push(f.sibling);
      if (f.child) stack.push(f.child);
    }
    return null;
  }

  function componentFor(el) {
    const host = hostFiber(el);
    const fiber = host && componentAbove(host);
    if (fiber) return fiber;
    if (!reactOnPage()) throw new PageError("NOT_REACT", "This page does not use React (no React-rendered element found)");
    throw new PageError("NOT_FOUND", "No React component renders this element");
  }

  /** What `picked()` carries: name, props, state and owner names. */
  function reactSummary(el) {
    const fiber = componentFor(el);
    return {
      component: componentName(fiber),
      kind: KIND[fiber.tag],
      props: serialize(fiber.memoizedProps),
      state: stateOf(fiber),
      owners: owners(fiber).map((o) => o.name),
    };
  }

  let lastPicked = null; // WeakRef to the element isolated.js picked last

  function reactTree(args) {
    let fiber;
    if (args.selector !== undefined) {
      if (typeof args.selector !== "string" || args.selector.length > L("MAX_SELECTOR_CHARS")) {
        throw new PageError("INVALID_JSON", "selector must be a CSS selector string");
      }
      let el;
      try {
        el = document.querySelector(args.selector);
      } catch {
        throw new PageError("INVALID_JSON", `Not a valid CSS selector: ${cut(args.selector, 200)}`);
      }
      if (!el) throw new PageError("NOT_FOUND", `No element matches ${cut(args.selector, 200)}`);
      fiber = componentFor(el);
    } else {
      const el = lastPicked?.deref();
      if (el?.isConnected) {
        fiber = componentFor(el);
      } else {
        // Nothing picked: the first component of the first root, an overview of the app.
        // (a root seen committing may have unmounted since: the first that still renders)
        const { roots, cut } = rootFibers(L("MAX_REACT_ROOTS"));
        for (const root of roots) {
          fiber = firstComponent(root);
          if (fiber) break;
        }
        if (!fiber) {
          if (cut && !roots.length) {
            throw new PageError("NOT_FOUND", `Nothing picked yet and no React root among the page's first ${L("MAX_REACT_ROOT_SCAN")} elements: pass a selector`);
          }
          if (!reactOnPage()) throw new PageError("NOT_REACT", "This page does not use React (no React-rendered element found)");
          throw new PageError("NOT_FOUND", "Nothing picked yet and no React component found: pass a selector");
        }
      }
    }
    const { hooks, more } = fiber.tag === CLASS ? { hooks: undefined } : hooksOf(fiber);
    const out = {
      component: componentName(fiber),
      kind: KIND[fiber.tag],
      props: serialize(fiber.memoizedProps),
      state: stateOf(fiber),
      owners: owners(fiber).map((o) => ({ name: o.name, props: serialize(o.props, L("MAX_OWNER_VALUE_NODES")) })),
      children: childComponents(fiber),
    };
    if (hooks) out.hooks = hooks;
    if (more) out.hooksTruncated = true;
    return out;
  }

  document.addEventListener(
    "__tap_react__",
    (e) => {
      let id = null;
      try {
        id = JSON.parse(String(e.detail)).id;
        const el = e.composedPath()[0];
        if (!(el instanceof Element)) throw new PageError("NOT_FOUND", "No element");
        lastPicked = new WeakRef(el);
        const react = reactSummary(el);
        dispatch.call(document, new CustomEvent("__tap_react_reply__", { detail: stringify({ id, react }) }));
      } catch (err) {
        dispatch.call(document, new CustomEvent("__tap_react_reply__", { detail: stringify({ id, error: errorOf(err) }) }));
      }
    },
    true,
  );

  parts.react = { reactTree };
})();
