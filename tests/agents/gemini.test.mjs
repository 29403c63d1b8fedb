// Gemini CLI connected by `tap connect gemini`: the real `@google/gemini-cli`, offline against
// the fake model, calls the test provider's tool and the MCP server's tool through the
// gateway; connected with a profile, the tool it hides never reaches the model.

import { agentSuite } from "./suite.mjs";
import { runGemini } from "./support.mjs";
import fs from "node:fs";
import path from "node:path";

agentSuite({
  client: "gemini",
  // A user's settings before `tap connect`: an auth method chosen (Gemini asks for one
  // otherwise), updates and statistics off, and a user policy (docs: reference/policy-engine.md) that lets the `tap`
  // server's tools run without confirmation, which non-interactive mode cannot ask for.
  prepareHome(home) {
    fs.mkdirSync(path.join(home, ".gemini", "policies"), { recursive: true });
    const settings = {
      security: { auth: { selectedType: "gemini-api-key" } },
      // Nothing but the fake model: no update check, no usage statistics.
      general: { enableAutoUpdate: false, enableAutoUpdateNotification: false },
      privacy: { usageStatisticsEnabled: false },
    };
    fs.writeFileSync(path.join(home, ".gemini", "settings.json"), `${JSON.stringify(settings, null, 2)}\n`);
    fs.writeFileSync(path.join(home, ".gemini", "policies", "tap.toml"), '[[rule]]\ntoolName = "mcp_tap_*"\ndecision = "allow"\npriority = 200\n');
  },
  configFile: (home) => path.join(home, ".gemini", "settings.json"),
  run: runGemini,
});
