// The gateway's tool results as the Copilot CLI's.

/** A `tool.result` as a Copilot tool result. */
export function toCopilotResult(msg) {
  if (msg.errorCode) {
    const text = `${msg.errorCode}: ${msg.error ?? "tool failed"}`;
    return { textResultForLlm: text, resultType: "failure", error: text };
  }
  const data = msg.data;
  if (data && typeof data === "object" && data.file && typeof data.file.path === "string") {
    const f = data.file;
    return { textResultForLlm: `File result: ${f.path} (${f.mimeType ?? "unknown type"}, ${f.size ?? "?"} bytes, readable until ${f.expiresAt ?? "?"})`, resultType: "success" };
  }
  return { textResultForLlm: typeof data === "string" ? data : JSON.stringify(data ?? null), resultType: "success" };
}
