/**
 * Where the scheduler configuration comes from, live: a file (`--scheduler-config`) or a ConfigMap
 * (`--scheduler-config-map`). Invalid at start: the engine does not start, with every problem named.
 * Invalid on a reload: the configuration in force stays, a warning is logged and (ConfigMap) a Warning
 * Event on the ConfigMap says why.
 */
import { readFile } from "node:fs/promises";
import { CoreV1Api, type KubeConfig, type V1ConfigMap, Watch } from "@kubernetes/client-node";
import { referenceKey } from "../../../api/object-key.ts";
import type { SchedulerConfig } from "../../../api/scheduler-config.ts";
import { describeConfig, parseSchedulerConfig } from "../../../machines/cluster-request/scheduler-config.ts";
import { type EventRecord, EventRecorder } from "../../event-recorder.ts";
import { Informer, type ListWatchSource } from "../../informer.ts";
import { errorMessage, type Logger } from "../../logger.ts";

/** The scheduler configuration in force, and news of its changes (the ClusterRequest kind's `schedulerConfig` setting). */
export interface SchedulerConfigView {
  /** The configuration in force; undefined when the engine was given none. */
  current(): SchedulerConfig | undefined;
  /** Told after a new valid configuration replaced the old one. */
  onChange(listener: (config: SchedulerConfig) => void): void;
  /** Loads it; throws with every problem when it is invalid (the engine then does not start). */
  start?(): Promise<void>;
  stop?(): void;
}

/** A live configuration: {@link SchedulerConfigView} plus its lifecycle. */
export interface SchedulerConfigSource extends SchedulerConfigView {
  /** Loads the configuration; throws an Error listing every problem when it is missing or invalid. */
  start(): Promise<void>;
  stop(): void;
}

/** How often a file is read again: ConfigMap volumes swap a symlink, which file watches miss; a read is cheap. */
const FILE_POLL_MS = 1_000;

/** Holds the configuration in force and tells listeners about valid replacements. */
class LiveConfig {
  config: SchedulerConfig | undefined;
  text: string | undefined;
  readonly listeners: Array<(config: SchedulerConfig) => void> = [];

  /** Applies `text`: the new configuration, or the problems (the old one stays). */
  apply(
    text: string,
    source: string,
  ): { config: SchedulerConfig } | { problems: readonly string[] } | "unchanged" {
    if (text === this.text) return "unchanged";
    const parsed = parseSchedulerConfig(text, source);
    if ("problems" in parsed) return parsed;
    const replacing = this.config !== undefined;
    this.text = text;
    this.config = parsed.config;
    if (replacing) for (const listener of this.listeners) listener(parsed.config);
    return parsed;
  }
}

/**
 * The configuration in the file at `path`, read again every second. `tell` records an Event about a
 * reload (in a cluster: on the engine's Pod, as a file has no object of its own).
 */
export function fileConfigSource(options: {
  readonly path: string;
  readonly log: Logger;
  readonly tell?: (event: EventRecord) => void;
}): SchedulerConfigSource {
  const live = new LiveConfig();
  const { path, log, tell } = options;
  let timer: ReturnType<typeof setInterval> | undefined;
  let lastProblem: string | undefined;
  const reload = async () => {
    let text: string;
    try {
      text = await readFile(path, "utf8");
    } catch (error) {
      warnOnce(`cannot read ${path}: ${errorMessage(error)}`);
      return;
    }
    const result = live.apply(text, path);
    if (result === "unchanged") return;
    if ("problems" in result) warnOnce(result.problems.join("; "));
    else {
      lastProblem = undefined;
      log.info("scheduler configuration reloaded", { path, ...describeConfig(result.config) });
      tell?.({
        type: "Normal",
        reason: "SchedulerConfigLoaded",
        message: `scheduler configuration ${path} reloaded`,
      });
    }
  };
  const warnOnce = (problem: string) => {
    if (problem === lastProblem) return;
    lastProblem = problem;
    log.warn("scheduler configuration not reloaded; the previous one stays in force", { path, problem });
    tell?.({
      type: "Warning",
      reason: "InvalidSchedulerConfig",
      message: `${path} not reloaded, the previous configuration stays in force: ${problem}`.slice(0, 1000),
    });
  };
  return {
    current: () => live.config,
    onChange: (listener) => live.listeners.push(listener),
    async start() {
      let text: string;
      try {
        text = await readFile(path, "utf8");
      } catch (error) {
        throw new Error(`scheduler configuration ${path} cannot be read: ${errorMessage(error)}`);
      }
      const result = live.apply(text, path);
      if (result !== "unchanged" && "problems" in result) {
        throw new Error(`scheduler configuration is invalid:\n  ${result.problems.join("\n  ")}`);
      }
      log.info("scheduler configuration loaded", {
        path,
        ...(live.config ? describeConfig(live.config) : {}),
      });
      timer = setInterval(() => void reload(), FILE_POLL_MS);
      timer.unref();
    },
    stop() {
      if (timer) clearInterval(timer);
    },
  };
}

/** The configuration in a ConfigMap's `config.yaml` (or its only key), watched. */
export function configMapSource(options: {
  readonly kubeConfig: KubeConfig;
  readonly namespace: string;
  readonly name: string;
  readonly log: Logger;
}): SchedulerConfigSource {
  const { kubeConfig, namespace, name, log } = options;
  const live = new LiveConfig();
  const what = `ConfigMap ${namespace}/${name}`;
  const events = new EventRecorder(kubeConfig, log);
  const informer = new Informer<V1ConfigMap>({
    kubeConfig,
    resource: { group: "", version: "v1", plural: "configmaps" },
    kind: "ConfigMap",
    source: oneConfigMap(kubeConfig, namespace, name),
    onError: (error) =>
      log.warn("watch of the scheduler configuration interrupted; recovering", {
        error: errorMessage(error),
      }),
  });
  const textOf = (configMap: V1ConfigMap | undefined): string | undefined => {
    const data = configMap?.data ?? {};
    const keys = Object.keys(data);
    return data["config.yaml"] ?? (keys.length === 1 ? data[keys[0] ?? ""] : undefined);
  };
  return {
    current: () => live.config,
    onChange: (listener) => live.listeners.push(listener),
    async start() {
      await informer.start();
      const configMap = informer.get(referenceKey({ namespace, name }));
      const text = textOf(configMap);
      if (text === undefined) {
        throw new Error(
          `scheduler configuration ${what} ${configMap ? "has no key config.yaml (and not exactly one key)" : "does not exist"}`,
        );
      }
      const result = live.apply(text, what);
      if (result !== "unchanged" && "problems" in result) {
        throw new Error(`scheduler configuration is invalid:\n  ${result.problems.join("\n  ")}`);
      }
      log.info("scheduler configuration loaded", {
        configMap: `${namespace}/${name}`,
        ...(live.config ? describeConfig(live.config) : {}),
      });
      informer.on((event) => {
        if (event.type === "delete") {
          log.warn("scheduler configuration ConfigMap deleted; the configuration in force stays", {
            configMap: `${namespace}/${name}`,
          });
          return;
        }
        const changed = textOf(event.object);
        if (changed === undefined) return;
        const applied = live.apply(changed, what);
        if (applied === "unchanged") return;
        const subject = { apiVersion: "v1", kind: "ConfigMap", metadata: event.object.metadata ?? {} };
        if ("problems" in applied) {
          log.warn("scheduler configuration not reloaded; the previous one stays in force", {
            configMap: `${namespace}/${name}`,
            problems: applied.problems,
          });
          void events.record(
            subject,
            {
              type: "Warning",
              reason: "InvalidSchedulerConfig",
              message:
                `not reloaded, the previous configuration stays in force: ${applied.problems.join("; ")}`.slice(
                  0,
                  1000,
                ),
            },
            new Date(),
          );
        } else {
          log.info("scheduler configuration reloaded", {
            configMap: `${namespace}/${name}`,
            ...describeConfig(applied.config),
          });
          void events.record(
            subject,
            { type: "Normal", reason: "SchedulerConfigLoaded", message: "scheduler configuration reloaded" },
            new Date(),
          );
        }
      });
    },
    stop: () => informer.stop(),
  };
}

/** Lists and watches just one ConfigMap (a field selector on its name), not every ConfigMap of the namespace. */
function oneConfigMap(kubeConfig: KubeConfig, namespace: string, name: string): ListWatchSource<V1ConfigMap> {
  const core = kubeConfig.makeApiClient(CoreV1Api);
  const watch = new Watch(kubeConfig);
  const fieldSelector = `metadata.name=${name}`;
  return {
    async list(params) {
      const page = await core.listNamespacedConfigMap({
        namespace,
        fieldSelector,
        limit: params.limit,
        ...(params.continue ? { _continue: params.continue } : {}),
      });
      return {
        items: page.items,
        metadata: {
          ...(page.metadata?._continue ? { continue: page.metadata._continue } : {}),
          ...(page.metadata?.resourceVersion ? { resourceVersion: page.metadata.resourceVersion } : {}),
        },
      };
    },
    watch(params, onEvent, onDone) {
      return watch.watch(
        `/api/v1/namespaces/${namespace}/configmaps`,
        { resourceVersion: params.resourceVersion, allowWatchBookmarks: true, fieldSelector },
        onEvent,
        onDone,
      );
    },
  };
}
