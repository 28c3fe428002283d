/**
 * A landscape's folder on this machine: which steps of `landscape up` are done, the bootstrap control plane, the
 * platform cluster's admin kubeconfig, and the engine's state folder (mounted at the same path into the platform
 * node and the engine's Pod). The bootstrap's engine runs in this process, started when a step needs it.
 */
import { createWriteStream, type WriteStream } from "node:fs";
import { chown, lstat, mkdir, readdir, readFile, rm, stat } from "node:fs/promises";
import { join, resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import type { KubeConfig } from "@kubernetes/client-node";
import {
  persistentAdminKubeConfig,
  startPersistentControlPlane,
  stopPersistentControlPlane,
} from "../../controlplane/persistent-control-plane.ts";
import { installCrds } from "../../runtime/api-server/install-crds.ts";
import { loadKubeConfig } from "../../runtime/api-server/load-kubeconfig.ts";
import type { Engine } from "../../runtime/engine.ts";
import { createLogger } from "../../runtime/logger.ts";
import { engineFromSettings } from "../../runtime/start/engine-from-settings.ts";
import { settingsFromOptions } from "../../runtime/start/engine-settings.ts";
import { writeFileAtomically } from "../../util/atomic-file.ts";
import { kubeAssets } from "../from-checkout.ts";
import { engineImageFromCheckout, kindBackendOptions } from "../kind-toolchain.ts";
import type { Landscape } from "./landscape-file.ts";
import { enginePlacement, type LandscapeHost, type Manifest, secretObjects } from "./landscape-plan.ts";

/** How `landscape up` and `down` run. */
export interface LandscapeSettings {
  readonly landscape: Landscape;
  /** The landscape's folder (absolute). */
  readonly directory: string;
  /** The folder of the landscape file: the paths it names are relative to it. */
  readonly fileFolder: string;
  /** The CRDs to install. */
  readonly crds: string;
  /** kube-apiserver and etcd for the bootstrap (default: as for `up`). */
  readonly assets?: string;
  /** The engine's image (default: built from this checkout). */
  readonly image?: string;
  /** How long each wait may take. */
  readonly timeoutMs: number;
  /** Progress, one line at a time. */
  readonly say: (line: string) => void;
  /** The commands that resume and tear down, as the user typed them. */
  readonly resumeCommand: string;
  readonly downCommand: string;
}

/** The bootstrap: its control plane (outlives this process until removed) and its engine (in this process). */
export interface Bootstrap {
  readonly kubeConfig: KubeConfig;
  readonly engine: Engine;
}

/** How long closing waits for the bootstrap's engine to stop. */
const ENGINE_STOP_MS = 30_000;

/** The uid the engine's Pod runs as when this process runs as root (deploy/base's). */
const POD_USER_WHEN_ROOT = 1000;

export class LandscapeFolder {
  readonly settings: LandscapeSettings;
  readonly landscape: Landscape;
  readonly bootstrapFolder: string;
  readonly bootstrapKubeconfig: string;
  readonly platformKubeconfig: string;
  /** The landscape engine's state folder (for a Pod: the same path here, in the platform node and in the Pod). */
  readonly stateFolder: string;
  /**
   * The bootstrap engine's: the same for an engine in a Pod (kind mounts files into nodes from there); its own for an
   * engine process of this machine, so that two engines never write one backend's records at once.
   */
  readonly bootstrapStateFolder: string;
  readonly #progressFile: string;
  #bootstrap: Promise<Bootstrap> | undefined;
  #engineLog: WriteStream | undefined;
  #kindTools: Record<string, string> | undefined;
  #host: LandscapeHost | undefined;

  private constructor(settings: LandscapeSettings) {
    this.settings = settings;
    this.landscape = settings.landscape;
    this.bootstrapFolder = join(settings.directory, "bootstrap");
    this.bootstrapKubeconfig = join(this.bootstrapFolder, "kubeconfig");
    this.platformKubeconfig = join(settings.directory, "platform.kubeconfig");
    this.stateFolder = join(settings.directory, "state");
    this.bootstrapStateFolder =
      enginePlacement(settings.landscape) === "pod"
        ? this.stateFolder
        : join(settings.directory, "bootstrap-state");
    this.#progressFile = join(settings.directory, "progress.json");
  }

  static async open(settings: LandscapeSettings): Promise<LandscapeFolder> {
    await mkdir(join(settings.directory, "state"), { recursive: true });
    return new LandscapeFolder(settings);
  }

  async doneSteps(): Promise<string[]> {
    try {
      const progress = JSON.parse(await readFile(this.#progressFile, "utf8")) as { done?: string[] };
      return progress.done ?? [];
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
      throw new Error(`${this.#progressFile}: ${(error as Error).message}`);
    }
  }

  async markDone(step: string): Promise<void> {
    const done = [...(await this.doneSteps()), step];
    await writeFileAtomically(this.#progressFile, `${JSON.stringify({ done }, null, 2)}\n`);
  }

  /** The bootstrap, found running again or started (its CRDs installed, its engine started here). */
  bootstrap(): Promise<Bootstrap> {
    this.#bootstrap ??= this.#startBootstrap();
    return this.#bootstrap;
  }

  async #startBootstrap(): Promise<Bootstrap> {
    const say = this.settings.say;
    await mkdir(this.bootstrapFolder, { recursive: true });
    const controlPlane = await startPersistentControlPlane({
      directory: this.bootstrapFolder,
      assets: kubeAssets(this.settings.assets),
      log: (line) => say(`  bootstrap: ${line}`),
    });
    say(
      `  bootstrap control plane ${controlPlane.adopted ? "found running" : "started"} at ${controlPlane.server}`,
    );
    await installCrds(controlPlane.kubeConfig, { directory: this.settings.crds });
    const logPath = join(this.settings.directory, "bootstrap-engine.log");
    this.#engineLog = createWriteStream(logPath, { flags: "a" });
    const stream = this.#engineLog;
    const log = createLogger({ level: "info", write: (line) => stream.write(`${line}\n`) });
    const engine = await engineFromSettings(
      settingsFromOptions({
        providerName: this.landscape.providerName,
        environment: this.landscape.environment,
        backend: this.landscape.backend,
        backendOptions: await this.kindTools(),
        stateDirectory: this.bootstrapStateFolder,
      }),
      controlPlane.kubeConfig,
      log,
    );
    await engine.start();
    say(
      `  bootstrap engine: provider ${this.landscape.providerName}, backend ${this.landscape.backend}, log ${logPath}`,
    );
    return { kubeConfig: controlPlane.kubeConfig, engine };
  }

  /** Stops the bootstrap's engine (if running here) and its control plane, and removes its folder. */
  async removeBootstrap(): Promise<void> {
    if (this.#bootstrap) {
      const { engine } = await this.#bootstrap;
      await engine.stop();
      this.#bootstrap = undefined;
    }
    this.#engineLog?.end();
    await stopPersistentControlPlane(this.bootstrapFolder, { remove: true });
    if (this.bootstrapStateFolder !== this.stateFolder)
      await rm(this.bootstrapStateFolder, { recursive: true, force: true });
  }

  /** The bootstrap's admin access, if its control plane runs (e.g. for `down` after a failed `up`). */
  bootstrapKubeConfigIfRunning(): Promise<KubeConfig | undefined> {
    return persistentAdminKubeConfig(this.bootstrapFolder);
  }

  async platformKubeConfig(): Promise<KubeConfig> {
    try {
      await stat(this.platformKubeconfig);
    } catch {
      throw new Error(`no admin kubeconfig of the platform cluster at ${this.platformKubeconfig}`);
    }
    return loadKubeConfig(this.platformKubeconfig).kubeConfig;
  }

  /** The kind backend's options: the toolchain's kind and Docker CLI unless the landscape names its own. */
  async kindTools(): Promise<Record<string, string>> {
    this.#kindTools ??=
      this.landscape.backend === "kind"
        ? kindBackendOptions(this.landscape.backendOptions, this.settings.say)
        : { ...this.landscape.backendOptions };
    return this.#kindTools;
  }

  /** This host as the engine in the platform cluster reaches it. */
  async host(): Promise<LandscapeHost> {
    if (this.#host) return this.#host;
    const dockerSocket = (process.env.DOCKER_HOST ?? "unix:///var/run/docker.sock").replace(/^unix:\/\//, "");
    const info = await stat(dockerSocket).catch(() => undefined);
    if (!info?.isSocket())
      throw new Error(
        `${dockerSocket} is not the Docker engine's socket: set DOCKER_HOST to unix://<its path>`,
      );
    const uid = process.getuid?.() ?? POD_USER_WHEN_ROOT;
    this.#host = {
      stateFolder: this.stateFolder,
      dockerSocket,
      dockerSocketGroup: info.gid,
      podUser: uid === 0 ? POD_USER_WHEN_ROOT : uid,
      image: this.settings.image ?? engineImageFromCheckout(this.settings.say),
    };
    return this.#host;
  }

  /** The landscape's Secrets, their keys read from the files the landscape file names. */
  async secrets(): Promise<Manifest[]> {
    const texts = new Map<string, string>();
    for (const secret of this.landscape.secrets)
      for (const path of Object.values(secret.files))
        texts.set(path, await readFile(resolve(this.settings.fileFolder, path), "utf8"));
    return secretObjects(this.landscape, (path) => texts.get(path) ?? "");
  }

  /** Gives the state folder to the Pod's user, when this process (root) wrote it as another. */
  async handStateFolderToPod(): Promise<void> {
    if (enginePlacement(this.landscape) !== "pod") return;
    const { podUser } = await this.host();
    if (process.getuid?.() !== 0) return;
    await chownTree(this.stateFolder, podUser);
  }

  /** Removes the whole folder (after `down`). */
  async remove(): Promise<void> {
    await rm(this.settings.directory, { recursive: true, force: true });
  }

  /**
   * Stops the bootstrap's engine if it runs here (its control plane runs on, for a resumed run). Bounded: a stop
   * that hangs (a backend call under way) must not keep a failed run from saying so; the process exits after.
   */
  async close(): Promise<void> {
    const bootstrap = this.#bootstrap;
    this.#bootstrap = undefined;
    const engine = bootstrap && (await bootstrap.catch(() => undefined))?.engine;
    if (engine) {
      const stopped = await Promise.race([
        engine.stop().then(() => true),
        sleep(ENGINE_STOP_MS).then(() => false),
      ]);
      if (!stopped)
        this.settings.say(
          `the bootstrap's engine did not stop within ${ENGINE_STOP_MS / 1_000} s; leaving it`,
        );
    }
    this.#engineLog?.end();
  }
}

/** Gives a folder's tree to `uid`. */
async function chownTree(path: string, uid: number): Promise<void> {
  await chown(path, uid, uid);
  for (const entry of await readdir(path)) {
    const child = join(path, entry);
    const info = await lstat(child);
    if (info.isDirectory()) await chownTree(child, uid);
    else if (!info.isSymbolicLink()) await chown(child, uid, uid);
  }
}
