/** The generated PKI: what kube-apiserver and its clients will check, checked with Node's own X.509 parser. */
import { createPrivateKey, createPublicKey, X509Certificate } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { type ControlPlaneCertificates, generateCertificates } from "../../src/controlplane/certificates.ts";

const serverAuth = "1.3.6.1.5.5.7.3.1";
const clientAuth = "1.3.6.1.5.5.7.3.2";
const now = new Date("2026-01-02T03:04:05Z");

describe("control-plane certificates", () => {
  let certs: ControlPlaneCertificates;
  let ca: X509Certificate;

  beforeAll(async () => {
    certs = await generateCertificates({
      hosts: ["127.0.0.1", "localhost"],
      clientName: "admin",
      clientGroups: ["system:masters"],
      now,
    });
    ca = new X509Certificate(certs.caCert);
  });

  it("makes a CA that signs both leaf certificates", () => {
    expect(ca.ca).toBe(true);
    for (const pem of [certs.servingCert, certs.clientCert]) {
      const leaf = new X509Certificate(pem);
      expect(leaf.ca).toBe(false);
      expect(leaf.checkIssued(ca)).toBe(true);
      expect(leaf.verify(ca.publicKey)).toBe(true);
    }
  });

  it("makes a serving certificate for exactly the loopback IP and localhost", () => {
    const serving = new X509Certificate(certs.servingCert);
    expect(serving.checkIP("127.0.0.1")).toBe("127.0.0.1");
    expect(serving.checkHost("localhost")).toBe("localhost");
    expect(serving.checkHost("example.com")).toBeUndefined();
    expect(serving.keyUsage).toEqual([serverAuth]);
  });

  it("makes an admin client certificate in the requested groups", () => {
    const client = new X509Certificate(certs.clientCert);
    expect(client.subject.split("\n")).toEqual(expect.arrayContaining(["CN=admin", "O=system:masters"]));
    expect(client.keyUsage).toEqual([clientAuth]);
  });

  it("starts validity just before the given time and lasts a year by default", () => {
    const serving = new X509Certificate(certs.servingCert);
    expect(new Date(serving.validFrom).getTime()).toBeLessThanOrEqual(now.getTime());
    expect(new Date(serving.validTo).getTime() - now.getTime()).toBeGreaterThanOrEqual(364 * 86_400_000);
  });

  it("pairs each private key with its public half", () => {
    const client = new X509Certificate(certs.clientCert);
    const clientPublic = createPublicKey(createPrivateKey(certs.clientKey)).export({
      type: "spki",
      format: "pem",
    });
    expect(clientPublic).toBe(client.publicKey.export({ type: "spki", format: "pem" }));
    const saPublic = createPublicKey(createPrivateKey(certs.serviceAccountKey)).export({
      type: "spki",
      format: "pem",
    });
    expect(saPublic).toBe(certs.serviceAccountPublicKey);
  });
});
