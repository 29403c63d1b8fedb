// Injected into a shared tab's ISOLATED world (the extension's content-script world: same DOM,
// its own globals, invisible to the page), last of the worker's ISOLATED file list:
// `executeScript({files: ["src/limits.js", "src/page/dom.js", "src/page/console-ring.js",
// "src/page/inspector.js", "src/page/isolated.js"], world: "ISOLATED"})`. The earlier files
// leave their parts in `globalThis.__tapPageParts` (this world's global, not the page's):
// dom.js (outline, query, styles), console-ring.js (the console ring), inspector.js (the
// overlay, picking, Ask the agent); this one adds click and type and defines the API.
//
// Defines `globalThis.__tapPage` with outline, query, picked, styles, consoleEntries, click,
// type, pickStart, pickStop, unshare. Each takes one JSON object and RETURNS AN ENVELOPE,
// never throws: `{ok: value}` or `{error: {code, message}}` (executeScript passes return values
// through structured cloning, and a thrown Error would lose its `.code` on the way).
// Codes: INVALID_JSON (bad arguments), NOT_FOUND (no such element / nothing picked),
// NOT_VISIBLE (click/type on an element that is not rendered), DISABLED, INTERNAL.
//
// Idempotent: a second injection of any of the files finds `__tapPage` and does nothing;
// unshare() removes the overlay and listeners and deletes `__tapPage` and its parts, so
// sharing again starts afresh.
(() => {
  "use strict";
  if (globalThis.__tapPage) return;
  const L = globalThis.__tapLimits;
  const parts = globalThis.__tapPageParts;
  // An incomplete file list (limits.js, dom.js, console-ring.js, inspector.js come first) must
  // not define a half __tapPage: without one the worker reports the scripts missing.
  if (!L || !parts?.dom || !parts.consoleRing || !parts.inspector) return;
  const { PageError, invalid, cut, find, visible, outline, query, styles } = parts.dom;
  const { consoleEntries } = parts.consoleRing;
  const { pickStart, pickStop, picked } = parts.inspector;

  function actionable(el, selector) {
    if (!visible(el)) throw new PageError("NOT_VISIBLE", `${cut(selector, 200)} is not visible`);
    if (el.matches(":disabled")) throw new PageError("DISABLED", `${cut(selector, 200)} is disabled`);
  }

  function click(args) {
    const el = find(args.selector);
    actionable(el, args.selector);
    el.scrollIntoView({ block: "center", inline: "center" });
    const r = el.getBoundingClientRect();
    const at = { bubbles: true, cancelable: true, composed: true, view: window, clientX: r.x + r.width / 2, clientY: r.y + r.height / 2, button: 0 };
    el.dispatchEvent(new PointerEvent("pointerdown", { ...at, pointerType: "mouse", isPrimary: true }));
    el.dispatchEvent(new MouseEvent("mousedown", { ...at, buttons: 1 }));
    if (el instanceof HTMLElement) el.focus({ preventScroll: true });
    el.dispatchEvent(new PointerEvent("pointerup", { ...at, pointerType: "mouse", isPrimary: true }));
    el.dispatchEvent(new MouseEvent("mouseup", at));
    // click() runs the element's activation (links follow, checkboxes toggle, forms submit).
    if (el instanceof HTMLElement) el.click();
    else el.dispatchEvent(new MouseEvent("click", at));
    return { clicked: args.selector };
  }

  /**
   * Replaces the field's content with `text`, as a user selecting all and typing would. The
   * value goes through the prototype's setter: React's value tracker lives in the MAIN world,
   * so it still sees a change and its onChange runs on the input event.
   */
  function type(args) {
    if (typeof args.text !== "string" || args.text.length > L.MAX_TYPE_TEXT_CHARS) {
      throw invalid(`text must be a string of at most ${L.MAX_TYPE_TEXT_CHARS} characters`);
    }
    const el = find(args.selector);
    actionable(el, args.selector);
    el.focus?.({ preventScroll: false });
    if (el instanceof HTMLInputElement || el instanceof HTMLTextAreaElement) {
      const setter = Object.getOwnPropertyDescriptor(Object.getPrototypeOf(el), "value").set;
      setter.call(el, args.text);
      el.dispatchEvent(new InputEvent("input", { bubbles: true, composed: true, inputType: "insertText", data: args.text }));
      el.dispatchEvent(new Event("change", { bubbles: true }));
    } else if (el.isContentEditable) {
      document.getSelection()?.selectAllChildren(el);
      document.execCommand("insertText", false, args.text);
    } else {
      throw invalid(`${cut(args.selector, 200)} is not a text field`);
    }
    if (args.submit === true) {
      const key = { key: "Enter", code: "Enter", keyCode: 13, which: 13, bubbles: true, cancelable: true, composed: true };
      const proceed = el.dispatchEvent(new KeyboardEvent("keydown", key));
      el.dispatchEvent(new KeyboardEvent("keyup", key));
      if (proceed && el.form && el instanceof HTMLInputElement) el.form.requestSubmit();
    }
    return { typed: [...args.text].length };
  }

  // ---- wiring ------------------------------------------------------------------------

  parts.consoleRing.start();
  parts.inspector.start();

  function unshare() {
    parts.inspector.stop();
    parts.consoleRing.stop();
    delete globalThis.__tapPage;
    delete globalThis.__tapPageParts;
    return { unshared: true };
  }

  function envelope(fn) {
    return (args) => {
      try {
        return { ok: fn(args && typeof args === "object" && !Array.isArray(args) ? args : {}) };
      } catch (e) {
        const code = e instanceof PageError ? e.code : "INTERNAL";
        return { error: { code, message: cut(e?.message ?? String(e), L.MAX_ERROR_MESSAGE_CHARS) } };
      }
    };
  }

  const api = { outline, query, picked, styles, consoleEntries, click, type, pickStart, pickStop, unshare };
  for (const k of Object.keys(api)) api[k] = envelope(api[k]);
  Object.defineProperty(globalThis, "__tapPage", { value: Object.freeze(api), configurable: true, enumerable: false, writable: false });
})();
