/** The live view as a browser test serves it: on a free loopback port, drawing every machine kind, silent. */
import { MACHINE_KINDS } from "../../src/runtime/kinds/registry.ts";
import { silentLogger } from "../../src/runtime/logger.ts";
import type { LiveViewModel } from "../../src/views/live-view-model.ts";
import { type LiveViewServer, startLiveViewServer } from "../../src/views/live-view-server.ts";

/** Serves `view` on 127.0.0.1 at a port the system picks. */
export const serveLiveView = (view: LiveViewModel): Promise<LiveViewServer> =>
  startLiveViewServer({
    host: "127.0.0.1",
    port: 0,
    view,
    machines: MACHINE_KINDS.map((kind) => kind.definition.machine),
    log: silentLogger,
  });
