/**
 * A real mutating admission webhook on a real API server, for tests that play another platform component
 * (openMCP's IPAM service appends `spec.clusterConfigs` to Clusters): an HTTPS server on loopback with a
 * certificate of its own CA, registered as a MutatingWebhookConfiguration that the API server calls.
 */
import { createServer } from "node:https";
import type { AddressInfo } from "node:net";
import { AdmissionregistrationV1Api, type KubeConfig, type V1LabelSelector } from "@kubernetes/client-node";
import { generateLoopbackCertificates } from "../../src/controlplane/certificates.ts";

/** One RFC 6902 operation of the webhook's answer. */
export interface JsonPatchOperation {
  readonly op: "add" | "replace" | "remove";
  readonly path: string;
  readonly value?: unknown;
}

export interface MutatingWebhook {
  /** Objects it was asked about. */
  readonly calls: number;
  stop(): Promise<void>;
}

/** Registers `name` for CREATE of `resource` (objects matching `objectSelector`), answering with `mutate`'s patch. */
export async function startMutatingWebhook(
  kubeConfig: KubeConfig,
  options: {
    readonly name: string;
    readonly resource: { readonly group: string; readonly version: string; readonly plural: string };
    readonly objectSelector: V1LabelSelector;
    readonly mutate: (object: Record<string, unknown>) => readonly JsonPatchOperation[];
  },
): Promise<MutatingWebhook> {
  const pki = await generateLoopbackCertificates();
  let calls = 0;
  const server = createServer({ cert: pki.servingCert, key: pki.servingKey }, (request, response) => {
    let body = "";
    request.on("data", (chunk: Buffer) => {
      body += chunk.toString();
    });
    request.on("end", () => {
      calls++;
      const review = JSON.parse(body) as { request: { uid: string; object: Record<string, unknown> } };
      const patch = options.mutate(review.request.object);
      response.setHeader("content-type", "application/json");
      response.end(
        JSON.stringify({
          apiVersion: "admission.k8s.io/v1",
          kind: "AdmissionReview",
          response: {
            uid: review.request.uid,
            allowed: true,
            ...(patch.length > 0
              ? { patchType: "JSONPatch", patch: Buffer.from(JSON.stringify(patch)).toString("base64") }
              : {}),
          },
        }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const api = kubeConfig.makeApiClient(AdmissionregistrationV1Api);
  await api.createMutatingWebhookConfiguration({
    body: {
      metadata: { name: options.name },
      webhooks: [
        {
          name: options.name,
          admissionReviewVersions: ["v1"],
          sideEffects: "None",
          failurePolicy: "Fail",
          objectSelector: options.objectSelector,
          clientConfig: {
            url: `https://127.0.0.1:${port}/mutate`,
            caBundle: Buffer.from(pki.caCert).toString("base64"),
          },
          rules: [
            {
              apiGroups: [options.resource.group],
              apiVersions: [options.resource.version],
              resources: [options.resource.plural],
              operations: ["CREATE"],
            },
          ],
        },
      ],
    },
  });
  return {
    get calls() {
      return calls;
    },
    async stop() {
      await api.deleteMutatingWebhookConfiguration({ name: options.name });
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
