/** `openmcp-engine up`: a local control plane with our CRDs, for trying the engine and for development. */
import { mkdir, writeFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { kubeconfigYaml, startControlPlane } from "../controlplane/control-plane.ts";
import { findKubeAssets, kubeAssetVersions } from "../controlplane/kube-assets.ts";
import { UsageError } from "./usage-error.ts";

const repositoryRoot = join(import.meta.dirname, "..", "..");

export const upUsage = `Usage: openmcp-engine up [flags]

Starts etcd and kube-apiserver on loopback, installs the CRDs, writes a kubeconfig and stays up until
Ctrl-C; then both processes stop and their data is removed.

Flags:
  --kubeconfig-out <path>   where to write the admin kubeconfig (default: .state/kubeconfig)
  --crds <folder>           CRDs to install (default: the crds/ folder of this project)
  --assets <folder>         folder with kube-apiserver and etcd (default: KUBEBUILDER_ASSETS, else built once by hack/kube/build.sh)
  -h, --help                show this help`;

/** Runs `up` with its command-line arguments; resolves after Ctrl-C (SIGINT) or SIGTERM. */
export async function up(args: string[]): Promise<void> {
  const flags = parseFlags(args);
  const assets = findKubeAssets(flags.assets);
  const versions = kubeAssetVersions(assets);
  console.log(
    `Starting kube-apiserver ${versions.kubernetes} and etcd ${versions.etcd} from ${assets.directory}`,
  );
  const controlPlane = await startControlPlane({
    assetsDirectory: assets.directory,
    crdDirectory: flags.crds,
    log: (message) => console.log(`  ${message}`),
  });
  await mkdir(dirname(flags.kubeconfigOut), { recursive: true });
  await writeFile(flags.kubeconfigOut, kubeconfigYaml(controlPlane.kubeConfig), { mode: 0o600 });

  console.log(`
Local control plane is up at ${controlPlane.server}.
  kubeconfig:  ${flags.kubeconfigOut}
  try:         kubectl --kubeconfig ${flags.kubeconfigOut} get crds
               kubectl --kubeconfig ${flags.kubeconfigOut} create namespace my-namespace
               kubectl --kubeconfig ${flags.kubeconfigOut} apply -f test/fixtures/
               kubectl --kubeconfig ${flags.kubeconfigOut} get clusterprofiles,clusters -A
  processes:   etcd pid ${controlPlane.etcd.pid}, kube-apiserver pid ${controlPlane.apiServer.pid}
  logs:        ${controlPlane.directory}/{etcd,kube-apiserver}.log
Press Ctrl-C to stop; all data is removed then.`);

  // The child processes are unreferenced, so without this timer Node would exit right here.
  const keepAlive = setInterval(() => {}, 1 << 30);
  await new Promise<void>((resolveStop) => {
    const stop = (signal: NodeJS.Signals) => {
      console.log(`\n${signal}: stopping the control plane`);
      clearInterval(keepAlive);
      controlPlane.stop().then(resolveStop, resolveStop);
    };
    process.once("SIGINT", stop);
    process.once("SIGTERM", stop);
  });
}

interface UpFlags {
  readonly kubeconfigOut: string;
  readonly crds: string;
  readonly assets: string | undefined;
}

function parseFlags(args: string[]): UpFlags {
  try {
    const { values } = parseArgs({
      args,
      options: {
        "kubeconfig-out": { type: "string" },
        crds: { type: "string" },
        assets: { type: "string" },
      },
      strict: true,
      allowPositionals: false,
    });
    return {
      kubeconfigOut: resolve(values["kubeconfig-out"] ?? join(".state", "kubeconfig")),
      crds: resolve(values.crds ?? join(repositoryRoot, "crds")),
      assets: values.assets,
    };
  } catch (error) {
    throw new UsageError((error as Error).message, upUsage);
  }
}
