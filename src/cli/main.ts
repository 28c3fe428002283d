#!/usr/bin/env node
import { run, runUsage } from "./run.ts";
import { up, upUsage } from "./up.ts";
/** Entry point of the `openmcp-engine` command: dispatches to a subcommand. */
import { UsageError } from "./usage-error.ts";

const usage = `Usage: openmcp-engine <command> [flags]

Commands:
  up      A local control plane (etcd + kube-apiserver) with the CRDs, the engine and a demo; until Ctrl-C.
  run     The controller, against the cluster of --kubeconfig (or in-cluster); until SIGTERM or Ctrl-C.

Run 'openmcp-engine <command> --help' for the flags of a command.`;

const commands: Record<string, { run: (args: string[]) => Promise<void>; usage: string }> = {
  up: { run: up, usage: upUsage },
  run: { run, usage: runUsage },
};

async function main(argv: string[]): Promise<void> {
  const [name, ...rest] = argv;
  if (name === undefined || name === "--help" || name === "-h" || name === "help") {
    console.log(usage);
    return;
  }
  const command = commands[name];
  if (!command) throw new UsageError(`unknown command "${name}"`, usage);
  if (rest.includes("--help") || rest.includes("-h")) {
    console.log(command.usage);
    return;
  }
  await command.run(rest);
}

main(process.argv.slice(2)).catch((error: unknown) => {
  if (error instanceof UsageError) {
    console.error(`openmcp-engine: ${error.message}\n\n${error.usage}`);
    process.exit(2);
  }
  console.error(`openmcp-engine: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
