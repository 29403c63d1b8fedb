// opencode connected by `tap connect opencode`: the real `opencode-ai`, offline against the
// fake model (an OpenAI-compatible provider), calls the test provider's tool and the MCP
// server's tool through the gateway; connected with a profile, the tool it hides never
// reaches the model.

import path from "node:path";
import { agentSuite } from "./suite.mjs";
import { runOpencode } from "./support.mjs";

agentSuite({
  client: "opencode",
  configFile: (home) => path.join(home, ".config", "opencode", "opencode.json"),
  run: runOpencode,
});
