/**
 * What cert-manager does for a provider's webhooks, done once by the test instead (cert-manager cannot be
 * installed here: no registry): for each cert-manager `Certificate` in the components, a CA and a serving
 * certificate for its `dnsNames`, stored in the Secret it names (`tls.crt`, `tls.key`, `ca.crt`, as
 * cert-manager writes it), and that CA set as `caBundle` wherever `cert-manager.io/inject-ca-from` names the
 * Certificate (webhook configurations, CRD conversion webhooks: cert-manager's cainjector). The `Issuer` and
 * `Certificate` objects themselves are dropped (no API serves them).
 */
import type { KubernetesObject } from "@kubernetes/client-node";
import { generateCertificates } from "../../src/controlplane/certificates.ts";

type Loose = KubernetesObject & Record<string, unknown>;
type ClientConfig = { clientConfig?: { caBundle?: string } };
const INJECT = "cert-manager.io/inject-ca-from";
const base64 = (text: string) => Buffer.from(text, "utf8").toString("base64");

/** The components without cert-manager's objects, with the Secrets and CA bundles cert-manager would have made. */
export async function withWebhookCertificates(
  objects: readonly KubernetesObject[],
  now = new Date(),
): Promise<KubernetesObject[]> {
  const certificates = objects.filter(
    (object) => object.kind === "Certificate" && (object.apiVersion ?? "").startsWith("cert-manager.io/"),
  ) as Array<Loose & { spec: { dnsNames: string[]; secretName: string } }>;
  const caBundles = new Map<string, string>();
  const secrets: KubernetesObject[] = [];
  for (const certificate of certificates) {
    const made = await generateCertificates({
      hosts: certificate.spec.dnsNames,
      clientName: "unused",
      clientGroups: [],
      now,
    });
    const namespace = certificate.metadata?.namespace ?? "";
    caBundles.set(`${namespace}/${certificate.metadata?.name}`, base64(made.caCert));
    secrets.push({
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: certificate.spec.secretName, namespace, labels: certificate.metadata?.labels ?? {} },
      type: "kubernetes.io/tls",
      data: {
        "tls.crt": base64(made.servingCert),
        "tls.key": base64(made.servingKey),
        "ca.crt": base64(made.caCert),
      },
    } as KubernetesObject);
  }
  const injected = objects
    .filter((object) => !(object.apiVersion ?? "").startsWith("cert-manager.io/"))
    .map((object) => {
      const from = object.metadata?.annotations?.[INJECT];
      if (from === undefined) return object;
      const caBundle = caBundles.get(from);
      if (!caBundle)
        throw new Error(`${object.kind} ${object.metadata?.name}: no Certificate ${from} to inject`);
      const copy = structuredClone(object) as Loose;
      for (const webhook of (copy as { webhooks?: ClientConfig[] }).webhooks ?? [])
        if (webhook.clientConfig) webhook.clientConfig.caBundle = caBundle;
      const conversion = (copy as { spec?: { conversion?: { webhook?: ClientConfig } } }).spec?.conversion
        ?.webhook;
      if (conversion?.clientConfig) conversion.clientConfig.caBundle = caBundle;
      return copy;
    });
  // Secrets right after the Namespaces: the manager mounts its serving certificate from one at start.
  const namespaces = injected.filter((object) => object.kind === "Namespace");
  return [...namespaces, ...secrets, ...injected.filter((object) => object.kind !== "Namespace")];
}
