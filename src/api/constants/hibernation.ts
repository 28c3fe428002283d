/** Constants of hibernation: how a Cluster is asked to sleep, and the reasons its status gives. */
import { ENGINE_GROUP } from "../constants.ts";

/**
 * The annotation that asks for a Cluster asleep (`"true"`) or awake (`"false"`, or absent). A Cluster's own knob,
 * on openMCP's Cluster as it is (its CRD gains no field); schedules set it too.
 */
export const HIBERNATE_ANNOTATION = `${ENGINE_GROUP}/hibernate`;

/** The Cluster machine's states of sleep (its `status.providerStatus.state`). */
export const HIBERNATION_STATES: ReadonlySet<string> = new Set(["hibernating", "hibernated", "waking"]);

/** The condition that says whether a Cluster sleeps or wakes as its annotation asks; present once it is asked. */
export const HIBERNATION_CONDITION = "Hibernation";

/** Reasons of the Hibernation condition and of ClusterReady while a Cluster sleeps. */
export const HIBERNATION_REASONS = {
  /** Asked to sleep; the backend stops it. */
  Hibernating: "Hibernating",
  /** Asleep as asked: nothing of it runs, its data, certificates and endpoint are kept. */
  Hibernated: "Hibernated",
  /** Asked to wake; the backend starts it on the same data. */
  Waking: "Waking",
  /** Awake as asked. */
  Awake: "Awake",
  /** Its backend cannot put clusters to sleep (e.g. `existing`). */
  HibernationNotOffered: "HibernationNotOffered",
  /** The annotation is neither "true" nor "false". */
  InvalidHibernationRequest: "InvalidHibernationRequest",
  /** An AccessRequest's Cluster sleeps: its access stands, usable once the Cluster is woken. */
  ClusterHibernated: "ClusterHibernated",
} as const;

/**
 * On a CAPI Cluster the `capi` backend put to sleep: the worker pools' `replicas` before the sleep, as JSON
 * (`{"md-0": 2}`; `null` for a pool that set none), so `wake` restores them exactly, also after an engine restart.
 */
export const CAPI_HIBERNATED_REPLICAS_ANNOTATION = `${ENGINE_GROUP}/hibernated-replicas`;

/**
 * On a CAPI Cluster the `capi` backend woke: the replicas it restored (as above), so `observe` says `waking` until
 * those workers are available. Removed by the backend's next write of the Cluster.
 */
export const CAPI_WAKING_REPLICAS_ANNOTATION = `${ENGINE_GROUP}/waking-replicas`;

/**
 * On a CAPI Cluster on Docker machines (CAPD) the `capi` backend put to sleep: the addresses its machine containers
 * had on each Docker network before they were stopped, as JSON (`{"<container>": {"kind": {"ipv4": "172.18.0.3"}}}`),
 * so `wake` starts them at the same addresses (kubeadm's certificates, etcd and the load balancer's configuration
 * name them). Its presence also says the backend paused the CAPI Cluster; `wake` removes both.
 */
export const CAPI_SLEEPING_MACHINES_ANNOTATION = `${ENGINE_GROUP}/hibernated-machines`;
