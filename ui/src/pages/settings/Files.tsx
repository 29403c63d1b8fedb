// Where the gateway keeps its token and state files, on the Settings page (it was on the
// Overview, which is now about health and activity).

import type { FileLocations } from "../../generated";

/** Where the token and state files are. Paths only: the files are private (mode 0600). */
export function Files({ files }: { files: FileLocations }) {
  const rows: [string, string | undefined, string][] = [
    ["Provider token", files.providerToken, "what Core Profile providers authenticate with"],
    ["Provider token (Copilot)", files.copilotProviderToken, "the same token, where the spec's providers look"],
    ["Session-host token", files.hostToken, "what session hosts authenticate with"],
    ["Control token", files.controlToken ?? undefined, "what the panel and `tap pairing` authenticate with"],
    ["Gateway state", files.state, "address, pid and start time, for `tap` commands"],
    ["Settings", files.settings, "port and notifications"],
    ["Remembered pairings", files.pairedProviders, "hashes of remembered providers' tokens"],
  ];
  return (
    <section aria-labelledby="files-heading">
      <h2 id="files-heading">Files</h2>
      <p class="small muted">
        In <span class="mono">{files.dataDir}</span> (TAP_HOME). Token files are readable only by you (mode 0600); they are removed when
        the gateway stops.
      </p>
      <div class="table-wrap">
        <table aria-label="Token and state files" data-testid="overview-files">
          <tbody>
            {rows.map(([label, path, what]) => (
              <tr key={label}>
                <th scope="row">{label}</th>
                <td class="mono small wrap" data-file={label}>
                  {path ?? <span class="muted">{label === "Control token" ? "kept by the desktop app (not a file)" : "not written"}</span>}
                </td>
                <td class="small muted">{what}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}
