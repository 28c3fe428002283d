/** The development views of `run` and `up`: the Stately inspector (`--inspect`) and the live view page. */
import type { Engine } from "../runtime/engine.ts";
import { MACHINE_KINDS } from "../runtime/kinds/registry.ts";
import { errorMessage, type Logger } from "../runtime/logger.ts";
import type { MachineObserver } from "../runtime/machine-observer.ts";
import { parseBindAddress } from "../runtime/probe-server.ts";
// Types only: the views' modules (WebSocket server, diagram layout, the page) load when their flag is on.
import type { InspectorServer } from "../views/inspector-server.ts";
import type { LiveViewModel } from "../views/live-view-model.ts";
import type { LiveViewServer } from "../views/live-view-server.ts";
import type { EngineFlagValues } from "./flags.ts";
import { UsageError } from "./usage-error.ts";

/** Where the inspector relay listens unless `--inspect-address` says otherwise. */
export const DEFAULT_INSPECT_ADDRESS = "127.0.0.1:8082";
/** Where `up` serves the live view unless `--live-view-address` says otherwise. */
export const DEFAULT_LIVE_VIEW_ADDRESS = "127.0.0.1:8083";

/** The flags, for `parseEngineArgs(args, usage, viewFlagOptions)`. */
export const viewFlagOptions = {
  inspect: { type: "boolean" },
  "inspect-address": { type: "string" },
  "live-view-address": { type: "string" },
} as const;

/** Their lines in a usage text. */
export const viewFlagsUsage = `  --inspect                       stream every resource's machine to the Stately inspector (development;
                                  off by default); open the page it logs in a browser
  --inspect-address <addr>        where the inspector relay listens (implies --inspect; default: ${DEFAULT_INSPECT_ADDRESS})
  --live-view-address <addr>      serve a read-only page: each kind's statechart with how many resources
                                  are in each state, a table of them, and the detail of the one picked;
                                  live and offline, e.g. ${DEFAULT_LIVE_VIEW_ADDRESS} (default: off)`;

/** Parsed view flags; `undefined` = off. Addresses are `host:port` (`:port` = every interface). */
export interface ViewFlags {
  readonly inspectAddress: string | undefined;
  readonly liveViewAddress: string | undefined;
}

/** Checks the view flags; `defaults.liveViewAddress` turns the live view on unless the user says `0`. */
export function viewFlags(
  values: EngineFlagValues,
  usage: string,
  defaults: { readonly liveViewAddress?: string } = {},
): ViewFlags {
  const text = (name: string) => (typeof values[name] === "string" ? (values[name] as string) : undefined);
  const address = (flag: string, value: string | undefined) => {
    if (value === undefined) return undefined;
    try {
      return parseBindAddress(value) ? value : undefined;
    } catch (error) {
      throw new UsageError(`--${flag}: ${errorMessage(error)}`, usage);
    }
  };
  const inspectRequested = values.inspect === true || text("inspect-address") !== undefined;
  if (values.inspect === false && text("inspect-address") !== undefined) {
    throw new UsageError("--inspect-address needs the inspector on; drop --no-inspect", usage);
  }
  return {
    inspectAddress: inspectRequested
      ? address("inspect-address", text("inspect-address") ?? DEFAULT_INSPECT_ADDRESS)
      : undefined,
    liveViewAddress: address("live-view-address", text("live-view-address") ?? defaults.liveViewAddress),
  };
}

/** The running views. */
export interface Views {
  /** To hand to the engine (`EngineOptions.observers`). */
  readonly observers: readonly MachineObserver[];
  /** The page that shows the Stately inspector, when `--inspect`. */
  readonly inspectorUrl: string | undefined;
  /** The live view, when on. */
  readonly liveViewUrl: string | undefined;
  /** Lets the live view follow the engine's caches (conditions, phase); call before `engine.start()`. */
  attach(engine: Engine): void;
  /** Stops serving; call after the engine stopped. */
  close(): Promise<void>;
}

/** Options of {@link startViews}. */
export interface StartViewsOptions {
  readonly log: Logger;
  /** When a view's port is taken, take a free one instead of failing (`up`: its URLs are printed anyway). */
  readonly anyPortIfTaken?: boolean;
}

/** Starts what the flags turn on; with both off, nothing listens and there are no observers. */
export async function startViews(flags: ViewFlags, options: StartViewsOptions): Promise<Views> {
  const { log } = options;
  const observers: MachineObserver[] = [];
  const closers: Array<() => Promise<void> | void> = [];
  let inspectorServer: InspectorServer | undefined;
  let liveViewServer: LiveViewServer | undefined;
  let liveView: LiveViewModel | undefined;
  try {
    const inspectBind = viewBind(log, "--inspect-address", flags.inspectAddress);
    if (inspectBind) {
      const { startInspectorServer } = await import("../views/inspector-server.ts");
      const { StatelyInspector } = await import("../views/stately-inspector.ts");
      inspectorServer = await listenSomewhere(inspectBind.port, options, (port) =>
        startInspectorServer({ host: inspectBind.host, port, log }),
      );
      const inspector = new StatelyInspector({ url: inspectorServer.webSocketUrl, log });
      observers.push(inspector);
      closers.push(inspectorServer.close, () => inspector.close()); // closed in reverse: inspector first
    }
    const liveViewBind = viewBind(log, "--live-view-address", flags.liveViewAddress);
    if (liveViewBind) {
      const { LiveViewModel } = await import("../views/live-view-model.ts");
      const { startLiveViewServer } = await import("../views/live-view-server.ts");
      liveView = new LiveViewModel();
      const view = liveView;
      const serve = (port: number) =>
        startLiveViewServer({
          host: liveViewBind.host,
          port,
          view,
          machines: MACHINE_KINDS.map((kind) => kind.definition.machine),
          log,
        });
      liveViewServer = await listenSomewhere(liveViewBind.port, options, serve);
      observers.push(view);
      closers.push(liveViewServer.close);
    }
  } catch (error) {
    for (const close of [...closers].reverse()) await close();
    throw error;
  }
  return {
    observers,
    inspectorUrl: inspectorServer?.pageUrl,
    liveViewUrl: liveViewServer?.url,
    attach: (engine) => {
      if (engine.shards) liveView?.setReplica(engine.shards.identity);
      for (const [kind, controller] of engine.machines) liveView?.watch(kind, controller.cache);
    },
    close: async () => {
      for (const close of [...closers].reverse()) await close();
    },
  };
}

/** Listens on `port`; if it is taken and the options allow, on a free port instead. */
async function listenSomewhere<T>(
  port: number,
  options: StartViewsOptions,
  listen: (port: number) => Promise<T>,
): Promise<T> {
  try {
    return await listen(port);
  } catch (error) {
    if (!(options.anyPortIfTaken && (error as NodeJS.ErrnoException).code === "EADDRINUSE")) throw error;
    options.log.info("port taken; using a free one", { port });
    return listen(0);
  }
}

/**
 * Where a view listens, undefined when it is off. These views are for development: say so when one
 * listens beyond loopback.
 */
function viewBind(
  log: Logger,
  flag: string,
  address: string | undefined,
): { readonly host: string; readonly port: number } | undefined {
  const bind = address === undefined ? undefined : parseBindAddress(address);
  if (!bind) return undefined;
  const { host } = bind;
  if (!(host === "localhost" || host === "::1" || host.startsWith("127."))) {
    log.warn(`${flag} listens on ${host}, beyond loopback: anyone who reaches it sees every resource`, {
      host,
    });
  }
  return bind;
}
