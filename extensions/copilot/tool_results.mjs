// The gateway's tool results as the Copilot CLI's: text for the model, and images (a provider's
// file result, an MCP server's image block) as attachments the model sees
// (`ToolResultObject.binaryResultsForLlm`), not a path it cannot open.

import fs from "node:fs";
import { MAX_ATTACHMENT_BYTES } from "./limits.mjs";

/** A `tool.result` as a Copilot tool result. */
export function toCopilotResult(msg) {
  if (msg.errorCode) {
    const text = `${msg.errorCode}: ${msg.error ?? "tool failed"}`;
    return { textResultForLlm: text, resultType: "failure", error: text };
  }
  const data = msg.data;
  if (data && typeof data === "object" && data.file && typeof data.file.path === "string") return fileResult(data.file);
  if (isMcpResult(data)) return mcpResult(data);
  return { textResultForLlm: typeof data === "string" ? data : JSON.stringify(data ?? null), resultType: "success" };
}

/** A provider's file result (session-host protocol, `tool.result`'s `data.file`): the gateway's
 * copy is read now (it is deleted at `expiresAt`) and attached, as an image when it is one. */
function fileResult(f) {
  const named = `File result: ${f.path} (${f.mimeType ?? "unknown type"}, ${f.size ?? "?"} bytes, readable until ${f.expiresAt ?? "?"})`;
  const mimeType = typeof f.mimeType === "string" ? f.mimeType : "application/octet-stream";
  let data;
  try {
    if (fs.statSync(f.path).size > MAX_ATTACHMENT_BYTES) {
      return { textResultForLlm: `${named}; larger than ${MAX_ATTACHMENT_BYTES} bytes, so not attached.`, resultType: "success" };
    }
    data = fs.readFileSync(f.path).toString("base64");
  } catch (e) {
    return { textResultForLlm: `${named}; it could not be read (${e.code ?? e.message}).`, resultType: "success" };
  }
  const type = mimeType.startsWith("image/") ? "image" : "resource";
  return { textResultForLlm: named, binaryResultsForLlm: [{ data, mimeType, type, description: f.path }], resultType: "success" };
}

/** An MCP server's result that was not all text: the gateway passes the MCP result object on
 * (docs/mcp-servers.md). */
function isMcpResult(data) {
  return !!data && typeof data === "object" && Array.isArray(data.content) && data.content.every((b) => b && typeof b.type === "string");
}

/** As the SDK's `convertMcpCallToolResult` does: text blocks are the text, images and blobs
 * attachments; what has no attachment form is described in the text. */
function mcpResult(r) {
  const texts = [];
  const binary = [];
  let bytes = 0;
  const attach = (data, mimeType, type, description) => {
    bytes += data.length * 0.75;
    if (bytes > MAX_ATTACHMENT_BYTES) return texts.push(`(${description}: larger than ${MAX_ATTACHMENT_BYTES} bytes, not attached)`);
    binary.push({ data, mimeType, type, ...(description ? { description } : {}) });
  };
  for (const b of r.content) {
    if (b.type === "text" && typeof b.text === "string") texts.push(b.text);
    else if (b.type === "image" && typeof b.data === "string") attach(b.data, b.mimeType ?? "image/png", "image", "an image");
    else if (b.type === "resource" && typeof b.resource?.blob === "string") attach(b.resource.blob, b.resource.mimeType ?? "application/octet-stream", "resource", b.resource.uri);
    else if (b.type === "resource" && typeof b.resource?.text === "string") texts.push(b.resource.text);
    else if (b.type === "resource_link") texts.push(`Resource: ${b.uri ?? b.name ?? "?"}`);
    else texts.push(`(${b.type} content: not shown)`);
  }
  if (texts.length === 0 && r.structuredContent !== undefined) texts.push(JSON.stringify(r.structuredContent));
  return { textResultForLlm: texts.join("\n"), ...(binary.length ? { binaryResultsForLlm: binary } : {}), resultType: "success" };
}
