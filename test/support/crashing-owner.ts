/** Run as a child process by a test: starts a control plane, reports it, then dies by SIGKILL without cleanup. */
import { startControlPlane } from "../../src/controlplane/control-plane.ts";

const controlPlane = await startControlPlane();
console.log(
  JSON.stringify({
    pids: [controlPlane.etcd.pid, controlPlane.apiServer.pid],
    directory: controlPlane.directory,
  }),
);
process.kill(process.pid, "SIGKILL");
