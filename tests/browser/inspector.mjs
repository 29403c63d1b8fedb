// Where the inspector's controls are on screen. The overlay lives in a closed shadow root, so
// neither the page nor Playwright's locators can reach into it (that is the point); the test
// asks the DevTools protocol, which sees through shadow roots (`DOM.getDocument` with
// `pierce`), for the controls' boxes, then uses them with the real mouse and keyboard like a
// user looking at the screen.

/**
 * The controls inside every shadow root of `page`'s document: { inputs, textareas, buttons:
 * [{text, x, y}] (x, y: the centre, in CSS pixels), texts: [every text in shadow roots] }.
 */
export async function shadowControls(page) {
  const cdp = await page.context().newCDPSession(page);
  try {
    const { root } = await cdp.send("DOM.getDocument", { depth: -1, pierce: true });
    const found = { inputs: [], textareas: [], buttons: [], texts: [] };
    const textOf = (node) => (node.nodeType === 3 ? node.nodeValue : (node.children ?? []).map(textOf).join("") + (node.shadowRoots ?? []).map(textOf).join(""));
    const centre = async (node) => {
      try {
        const { model } = await cdp.send("DOM.getBoxModel", { backendNodeId: node.backendNodeId });
        const q = model.border;
        return { x: (q[0] + q[2] + q[4] + q[6]) / 4, y: (q[1] + q[3] + q[5] + q[7]) / 4, width: model.width, height: model.height };
      } catch {
        return null; // not rendered (display: none)
      }
    };
    const walk = async (node, inShadow) => {
      if (inShadow && node.nodeType === 3 && node.nodeValue.trim()) found.texts.push(node.nodeValue.trim());
      if (inShadow && node.nodeType === 1) {
        const kind = { INPUT: "inputs", TEXTAREA: "textareas", BUTTON: "buttons" }[node.nodeName];
        if (kind) {
          const box = await centre(node);
          if (box && box.width > 0 && box.height > 0) found[kind].push({ text: textOf(node).trim(), ...box });
        }
      }
      for (const child of node.children ?? []) await walk(child, inShadow);
      for (const shadow of node.shadowRoots ?? []) await walk(shadow, true);
      if (node.contentDocument) await walk(node.contentDocument, inShadow);
    };
    await walk(root, false);
    return found;
  } finally {
    await cdp.detach().catch(() => {});
  }
}
