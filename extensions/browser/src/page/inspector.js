// ISOLATED world, after dom.js and console-ring.js. The inspector (pickStart): an overlay in a
// closed Shadow DOM on a plain <div> (not a custom element the page could define),
// `all: initial`, max z-index. While picking, a transparent shield covers the page: the
// hovered element (found under it with elementsFromPoint) is outlined with its selector; a
// click picks it and never reaches the page's elements; Escape cancels. Only trusted (user)
// events count, and the shield lives inside the closed shadow root: the page cannot fake a
// pick. After a pick, the "Ask the agent" box (its field has focus: type and press Enter)
// sends `chrome.runtime.sendMessage({type: "tap.ask", question, element})`, element being
// what picked() returns. The host carries `data-tap-state` = picking | asking | idle (page
// code can see the overlay exists anyway; tests wait on it).
//
// React: the fiber expandos live in the MAIN world; for a picked element this asks react.js
// (MAIN) with a CustomEvent `__tap_react__` on the element and reads the synchronous
// `__tap_react_reply__` (page data: the page could answer instead).
(() => {
  "use strict";
  if (globalThis.__tapPage) return; // already injected (isolated.js defines __tapPage last)
  const L = globalThis.__tapLimits;
  if (!L) return; // src/limits.js must be injected first
  const parts = (globalThis.__tapPageParts ??= {});
  const { PageError, cut, ours, selectorOf, describe } = parts.dom;
  const { send } = parts.consoleRing;
  let host = null; // the overlay's host element

  const replies = new Map();
  let requests = 0;
  function onReactReply(e) {
    try {
      const r = JSON.parse(String(e.detail));
      if (typeof r?.id === "string" && replies.has(r.id)) replies.set(r.id, r);
    } catch {
      // not ours
    }
  }

  /** main.js's summary of the component rendering `el`, or undefined (no React, or no main.js). */
  function reactOf(el) {
    // Not crypto.randomUUID: it exists only in secure contexts, and most shared tabs are
    // plain http. The id only pairs a reply with its request; it is no secret from the page.
    const id = `${++requests}:${Math.random()}`;
    replies.set(id, null);
    try {
      el.dispatchEvent(new CustomEvent("__tap_react__", { detail: JSON.stringify({ id }), bubbles: true, composed: true }));
      const r = replies.get(id);
      return r?.react && typeof r.react === "object" ? r.react : undefined;
    } finally {
      replies.delete(id);
    }
  }

  let picked = null; // {el, pickedAt, snapshot}
  let ui = null; // the overlay's parts while it exists
  let hovered = null;
  let frame = 0;

  const STYLE = `
    :host { all: initial; }
    .shield { position: fixed; inset: 0; pointer-events: auto; cursor: crosshair; background: transparent; }
    .box { position: fixed; pointer-events: none; border: 2px solid #4f46e5; background: rgba(79, 70, 229, 0.15);
      border-radius: 2px; box-sizing: border-box; display: none; }
    .label { position: fixed; pointer-events: none; display: none; max-width: 60vw; overflow: hidden; white-space: nowrap;
      text-overflow: ellipsis; font: 12px/1.4 ui-monospace, monospace; color: #fff; background: #312e81;
      padding: 2px 6px; border-radius: 3px; }
    .ask { position: fixed; pointer-events: auto; display: none; width: 320px; box-sizing: border-box; padding: 10px;
      font: 13px/1.4 system-ui, sans-serif; color: #111827; background: #fff; border: 1px solid #c7d2fe;
      border-radius: 6px; box-shadow: 0 8px 24px rgba(0, 0, 0, 0.2); }
    .ask .title { font-weight: 600; margin: 0 0 6px; display: flex; justify-content: space-between; }
    .ask .sel { font: 11px ui-monospace, monospace; color: #4b5563; margin: 0 0 6px; overflow: hidden;
      white-space: nowrap; text-overflow: ellipsis; }
    .ask input { width: 100%; box-sizing: border-box; padding: 5px 6px; border: 1px solid #9ca3af; border-radius: 4px;
      font: inherit; color: inherit; background: #fff; }
    .ask .row { display: flex; gap: 6px; margin-top: 6px; align-items: center; }
    .ask button { font: inherit; padding: 4px 10px; border-radius: 4px; border: 1px solid #4f46e5; background: #4f46e5;
      color: #fff; cursor: pointer; }
    .ask button.close { background: transparent; color: #4b5563; border: none; padding: 0 4px; font-size: 16px; }
    .ask .status { font-size: 12px; color: #4b5563; }
  `;

  function buildOverlay() {
    host = document.createElement("div");
    ours.add(host);
    host.setAttribute("data-tap-inspector", "");
    host.style.setProperty("all", "initial", "important");
    host.style.setProperty("position", "fixed", "important");
    host.style.setProperty("inset", "0", "important");
    host.style.setProperty("z-index", "2147483647", "important");
    host.style.setProperty("pointer-events", "none", "important");
    const shadow = host.attachShadow({ mode: "closed" });
    shadow.innerHTML = `<style>${STYLE}</style>
      <div class="box"></div><div class="label"></div>
      <form class="ask" autocomplete="off">
        <div class="title"><span>Ask the agent</span><button type="button" class="close" aria-label="Close">×</button></div>
        <div class="sel"></div>
        <input type="text" name="question" placeholder="What should the agent do with this element?">
        <div class="row"><button type="submit">Ask the agent</button><span class="status" role="status"></span></div>
      </form>`;
    const $ = (s) => shadow.querySelector(s);
    ui = { shadow, box: $(".box"), label: $(".label"), ask: $(".ask"), sel: $(".ask .sel"), input: $(".ask input"), status: $(".ask .status"), shield: null };
    ui.input.maxLength = L.MAX_ASK_QUESTION_CHARS;
    ui.ask.addEventListener("submit", onAskSubmit);
    $(".ask .close").addEventListener("click", (e) => e.isTrusted && closeAsk());
    // Keys typed into the question (and the click Enter makes on the submit button) stay in
    // the overlay: the page's shortcuts and click handlers must not fire.
    for (const t of ["keydown", "keyup", "keypress", "input", "beforeinput", "click", "mousedown", "mouseup", "pointerdown", "pointerup"]) {
      ui.ask.addEventListener(t, (e) => {
        if (e.type === "keydown" && e.key === "Escape" && e.isTrusted) closeAsk();
        e.stopPropagation();
      });
    }
    document.documentElement.append(host);
  }

  function setState(s) {
    host?.setAttribute("data-tap-state", s);
  }

  function showBox(el) {
    if (!ui) return;
    if (!el?.isConnected) {
      ui.box.style.display = ui.label.style.display = "none";
      return;
    }
    const r = el.getBoundingClientRect();
    Object.assign(ui.box.style, { display: "block", left: `${r.x}px`, top: `${r.y}px`, width: `${r.width}px`, height: `${r.height}px` });
    ui.label.textContent = `${cut(selectorOf(el), L.MAX_LABEL_CHARS)}  ${Math.round(r.width)}×${Math.round(r.height)}`;
    ui.label.style.display = "block";
    ui.label.style.left = `${Math.max(0, r.x)}px`;
    ui.label.style.top = `${r.y >= 22 ? r.y - 22 : Math.min(r.bottom + 2, innerHeight - 22)}px`;
  }

  function elementAt(x, y) {
    for (const el of document.elementsFromPoint(x, y)) if (el !== host && el !== document.documentElement) return el;
    return null;
  }

  function onShieldMove(e) {
    if (!e.isTrusted) return;
    const { clientX: x, clientY: y } = e;
    if (frame) return;
    frame = requestAnimationFrame(() => {
      frame = 0;
      hovered = elementAt(x, y);
      showBox(hovered);
    });
  }

  // Swallowed in the shadow tree, so nothing bubbles to the page's elements or its root
  // listeners (React's). Only window/document capture listeners see them, on the host.
  function swallow(e) {
    e.preventDefault();
    e.stopPropagation();
  }

  function onShieldClick(e) {
    swallow(e);
    if (!e.isTrusted || e.button !== 0) return;
    const el = elementAt(e.clientX, e.clientY);
    if (!el) return;
    pick(el);
  }

  function onKeyDown(e) {
    if (!e.isTrusted || e.key !== "Escape" || !ui) return;
    const state = host.getAttribute("data-tap-state");
    if (state !== "picking" && state !== "asking") return;
    swallow(e);
    e.stopImmediatePropagation();
    if (state === "picking") stopPicking();
    else closeAsk(); // the user clicked back into the page, then pressed Escape
  }

  function reposition() {
    if (!ui) return;
    const state = host.getAttribute("data-tap-state");
    if (state === "picking") showBox(hovered);
    else if (state === "asking") placeAsk();
  }

  function pickStart() {
    if (!ui || !host.isConnected) {
      host?.remove();
      buildOverlay();
    }
    closeAsk();
    if (!ui.shield) {
      ui.shield = document.createElement("div");
      ui.shield.className = "shield";
      ui.shield.addEventListener("mousemove", onShieldMove);
      for (const t of ["pointerdown", "mousedown", "pointerup", "mouseup", "dblclick", "contextmenu", "auxclick"]) {
        ui.shield.addEventListener(t, swallow);
      }
      ui.shield.addEventListener("click", onShieldClick);
      ui.shadow.append(ui.shield);
    }
    setState("picking");
    return { picking: true };
  }

  function stopPicking() {
    ui?.shield?.remove();
    if (ui) ui.shield = null;
    hovered = null;
    showBox(null);
    setState("idle");
  }

  function pickStop() {
    stopPicking();
    closeAsk();
    return { picking: false };
  }

  function pick(el) {
    stopPicking();
    const snapshot = { ...describe(el), pickedAt: Date.now() };
    const react = reactOf(el);
    if (react) snapshot.react = react;
    picked = { el, snapshot };
    openAsk(snapshot);
  }

  function placeAsk() {
    const el = picked?.el;
    showBox(el);
    const r = el?.isConnected ? el.getBoundingClientRect() : { left: 8, bottom: 8 };
    const w = 320;
    const h = ui.ask.offsetHeight || 130;
    const below = r.bottom + 8 + h <= innerHeight;
    ui.ask.style.left = `${Math.max(8, Math.min(r.left, innerWidth - w - 8))}px`;
    ui.ask.style.top = `${below ? r.bottom + 8 : Math.max(8, (r.top ?? 8) - h - 8)}px`;
  }

  function openAsk(snapshot) {
    ui.sel.textContent = cut(snapshot.react ? `${snapshot.react.component} · ${snapshot.selector}` : snapshot.selector, L.MAX_LABEL_CHARS);
    ui.status.textContent = "";
    ui.input.value = "";
    ui.ask.style.display = "block";
    setState("asking");
    placeAsk();
    ui.input.focus();
  }

  function closeAsk() {
    if (!ui) return;
    ui.ask.style.display = "none";
    showBox(null);
    if (host.getAttribute("data-tap-state") === "asking") setState("idle");
  }

  async function onAskSubmit(e) {
    e.preventDefault();
    e.stopPropagation();
    if (!e.isTrusted || !picked) return;
    const question = ui.input.value.trim().slice(0, L.MAX_ASK_QUESTION_CHARS);
    if (!question) {
      ui.status.textContent = "Type a question first";
      return;
    }
    const element = currentPicked();
    ui.status.textContent = "Sending…";
    const answer = await send({ type: "tap.ask", question, element });
    if (!ui) return;
    if (answer?.error) ui.status.textContent = cut(answer.error.message || answer.error.code, 200);
    else if (answer === undefined) ui.status.textContent = "Could not reach the Tap extension";
    else {
      ui.status.textContent = "Sent to the agent";
      ui.input.value = "";
    }
  }

  /** What was picked, refreshed while the element is still in the page (props and boxes change). */
  function currentPicked() {
    const { el, snapshot } = picked;
    if (!el.isConnected) return { ...snapshot };
    const fresh = { ...describe(el), pickedAt: snapshot.pickedAt };
    const react = reactOf(el);
    if (react) fresh.react = react;
    return fresh;
  }

  function pickedElement() {
    if (!picked) throw new PageError("NOT_FOUND", "Nothing picked yet: click Pick element in the Tap extension's popup");
    return currentPicked();
  }

  const listeners = [
    [document, "__tap_react_reply__", onReactReply, true],
    [window, "keydown", onKeyDown, true],
    [window, "scroll", reposition, { capture: true, passive: true }],
    [window, "resize", reposition, { passive: true }],
  ];
  function start() {
    for (const [target, name, fn, opts] of listeners) target.addEventListener(name, fn, opts);
  }
  function stop() {
    for (const [target, name, fn, opts] of listeners) target.removeEventListener(name, fn, opts);
    if (frame) cancelAnimationFrame(frame);
    host?.remove();
    host = ui = picked = hovered = null;
  }

  parts.inspector = { pickStart, pickStop, picked: pickedElement, start, stop };
})();
