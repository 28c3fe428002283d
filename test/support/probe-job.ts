/** A probe run inside a cluster: `node -e` in the engine's image as a Job, a Secret mounted, its JSON answer read. */
import { writeFileSync } from "node:fs";
import { join } from "node:path";

/** What {@link probeJobAnswer} runs. */
export interface ProbeJob {
  readonly namespace: string;
  /** The Job's name; its manifest is written to `<folder>/<job>.json`. */
  readonly job: string;
  /** An image with node (the engine's). */
  readonly image: string;
  /** The Secret mounted at `mountPath`. */
  readonly secretName: string;
  readonly mountPath: string;
  /** Node.js source that prints one line of JSON. */
  readonly probe: string;
  readonly folder: string;
}

/** Runs `props.probe` as a Job in `cluster`, waits for it to complete (3 minutes at most) and parses what it printed. */
export async function probeJobAnswer(
  cluster: { kubectl(...args: string[]): Promise<string> },
  props: ProbeJob,
): Promise<unknown> {
  const job = {
    apiVersion: "batch/v1",
    kind: "Job",
    metadata: { name: props.job, namespace: props.namespace },
    spec: {
      backoffLimit: 0,
      template: {
        spec: {
          restartPolicy: "Never",
          containers: [
            {
              name: "probe",
              image: props.image,
              imagePullPolicy: "IfNotPresent",
              command: ["node", "-e", props.probe],
              volumeMounts: [{ name: "mounted", mountPath: props.mountPath, readOnly: true }],
            },
          ],
          volumes: [{ name: "mounted", secret: { secretName: props.secretName } }],
        },
      },
    },
  };
  const file = join(props.folder, `${props.job}.json`);
  writeFileSync(file, JSON.stringify(job));
  await cluster.kubectl("apply", "-f", file);
  await cluster.kubectl(
    "-n",
    props.namespace,
    "wait",
    "--for=condition=complete",
    `job/${props.job}`,
    "--timeout=180s",
  );
  return JSON.parse((await cluster.kubectl("-n", props.namespace, "logs", `job/${props.job}`)).trim());
}
