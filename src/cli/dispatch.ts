/** The `openmcp-engine` command once main.ts has checked the Node version: dispatches to a subcommand, loading only that command's modules. */
import { useLeanClientNode } from "../runtime/start/lean-client-node.ts";
import { execWithEngineMemorySettings } from "../runtime/start/v8-flags.ts";
import { UsageError } from "./usage-error.ts";

const usage = `Usage: openmcp-engine <command> [flags]

Commands:
  up      A local control plane (etcd + kube-apiserver) with the CRDs, the engine and a demo; until Ctrl-C.
  init    Install or update the CRDs and the ClusterProfiles, then exit (the openMCP operator runs it first).
  run     The controller, against the cluster of --kubeconfig (or in-cluster); until SIGTERM or Ctrl-C.
  explain A resource's state, why it is there, what it waits for, and its recent transitions (read-only).
  plan    What the engine would write and which backend commands it would issue for proposed changes (read-only).
  statecharts  The machines' statecharts as Stately JSON, Mermaid and SVG files (default: into docs/statecharts).
  move    Clusters, their requests and access, with status, from one management cluster to another.
  landscape up|down  A landscape from nothing: its platform cluster made, then managed, by the engine itself.
  capi-components  The engine as clusterctl installs a Cluster API infrastructure provider (one YAML stream).
  new-backend  A backend package of your own: a typed skeleton that passes the conformance kit, its test, a README.

Run 'openmcp-engine <command> --help' for the flags of a command.`;

/** A subcommand: its entry and its usage text. */
interface Command {
  readonly run: (args: string[]) => Promise<void>;
  readonly usage: string;
}

/** A command's module by the convention most follow: its entry exported as `name`, its usage text as `<name>Usage`. */
type CommandModule<Name extends string> = Record<Name, (args: string[]) => Promise<void>> &
  Record<`${Name}Usage`, string>;

/** The command `name` of the module `load` imports, loaded on demand. */
function onDemand<const Name extends string>(
  name: Name,
  load: () => Promise<CommandModule<Name>>,
): () => Promise<Command> {
  return async () => {
    const module = await load();
    const entries: Record<Name, Command["run"]> = module;
    const usages: Record<`${Name}Usage`, string> = module;
    return { run: entries[name], usage: usages[`${name}Usage` as const] };
  };
}

// Loaded on demand: `run` never pays for the control plane of `up` or the diagram layout of `statecharts`.
const commands: Record<string, () => Promise<Command>> = {
  up: onDemand("up", () => import("./up.ts")),
  run: onDemand("run", () => import("./run.ts")),
  statecharts: onDemand("statecharts", () => import("./statecharts.ts")),
  init: onDemand("init", () => import("./init.ts")),
  explain: onDemand("explain", () => import("./explain.ts")),
  plan: async () => {
    const { planCommand, planUsage } = await import("./plan.ts");
    return { run: async (args) => void (await planCommand(args)), usage: planUsage };
  },
  move: onDemand("move", () => import("./move.ts")),
  landscape: onDemand("landscape", () => import("./landscape/landscape.ts")),
  "capi-components": async () => {
    const { printCapiComponents, capiComponentsUsage } = await import("./capi-components.ts");
    return { run: async (args) => printCapiComponents(args), usage: capiComponentsUsage };
  },
  "new-backend": onDemand("newBackend", () => import("./new-backend.ts")),
};

async function main(argv: string[]): Promise<void> {
  const [name, ...rest] = argv;
  if (name === undefined || name === "--help" || name === "-h" || name === "help") {
    console.log(usage);
    return;
  }
  const load = commands[name];
  if (!load) throw new UsageError(`unknown command "${name}"`, usage);
  // The commands that run the engine keep its memory low however node was started (see runtime/start/v8-flags.ts).
  if (name === "run" || name === "up" || name === "landscape") {
    execWithEngineMemorySettings();
    // Where the flags were given already (no replacement), still before the command loads the client.
    useLeanClientNode();
  }
  const command = await load();
  if (rest.includes("--help") || rest.includes("-h")) {
    console.log(command.usage);
    return;
  }
  await command.run(rest);
  // Done: let output drain and exit (with the exit code a command set, e.g. plan's), even if a library left a socket open.
  setTimeout(() => process.exit(), 1_000).unref();
}

main(process.argv.slice(2)).catch((error: unknown) => {
  if (error instanceof UsageError) {
    console.error(`openmcp-engine: ${error.message}\n\n${error.usage}`);
    process.exit(error.exitCode);
  }
  console.error(`openmcp-engine: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
