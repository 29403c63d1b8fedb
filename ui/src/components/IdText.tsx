import { useEffect, useState } from "preact/hooks";

/** Ids longer than this are shortened in the middle. */
const MAX = 14;
const HEAD = 8;
const TAIL = 4;

/** `s-187bbccd8243f0ee-1` → `s-187bbc…ee-1`: the start and the end, which tell ids apart. */
export function shortId(id: string): string {
  return id.length > MAX ? `${id.slice(0, HEAD)}…${id.slice(-TAIL)}` : id;
}

/** Puts `text` on the clipboard: the Clipboard API where allowed, else a hidden textarea. */
export async function copyText(text: string): Promise<void> {
  try {
    await navigator.clipboard.writeText(text);
    return;
  } catch {
    // Not a secure context, no permission, or a webview without the API.
  }
  const area = document.createElement("textarea");
  area.value = text;
  area.setAttribute("readonly", "");
  area.style.position = "fixed";
  area.style.opacity = "0";
  document.body.appendChild(area);
  area.select();
  const ok = document.execCommand("copy");
  area.remove();
  if (!ok) throw new Error("copy failed");
}

/**
 * An id that never breaks mid-token: shortened in the middle (the full id on hover and for
 * screen readers), with a button that copies the full id.
 */
export function IdText({ id, class: cls }: { id: string; class?: string }) {
  const [copied, setCopied] = useState<"yes" | "failed" | null>(null);
  useEffect(() => {
    if (!copied) return;
    const t = setTimeout(() => setCopied(null), 1500);
    return () => clearTimeout(t);
  }, [copied]);
  const short = shortId(id);
  return (
    <span class={`id${cls ? ` ${cls}` : ""}`}>
      <span class="id-short mono small" title={id}>
        <span aria-hidden="true">{short}</span>
        <span class="sr-only">{id}</span>
      </span>
      <button
        type="button"
        class="copy"
        aria-label={`Copy ${id}`}
        title={copied === "yes" ? "Copied" : copied === "failed" ? "Could not copy" : "Copy the full id"}
        onClick={() => copyText(id).then(() => setCopied("yes"), () => setCopied("failed"))}
      >
        {copied === "yes" ? <CheckIcon /> : <CopyIcon />}
      </button>
      <span class="sr-only" aria-live="polite">
        {copied === "yes" ? "Copied" : copied === "failed" ? "Could not copy" : ""}
      </span>
    </span>
  );
}

/* Drawn, not a font glyph: webviews and minimal Linux installs lack the symbol fonts. */
function CopyIcon() {
  return (
    <svg aria-hidden="true" viewBox="0 0 16 16" width="12" height="12" fill="none" stroke="currentColor" stroke-width="1.5">
      <rect x="5.5" y="5.5" width="8" height="8" rx="1.5" />
      <path d="M10.5 3.5v-1a1 1 0 0 0-1-1h-6a1 1 0 0 0-1 1v6a1 1 0 0 0 1 1h1" />
    </svg>
  );
}

function CheckIcon() {
  return (
    <svg aria-hidden="true" viewBox="0 0 16 16" width="12" height="12" fill="none" stroke="currentColor" stroke-width="2">
      <path d="M3 8.5l3 3 7-7" />
    </svg>
  );
}
