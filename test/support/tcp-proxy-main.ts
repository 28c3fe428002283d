/** The TCP proxy's process (see tcp-proxy-process.ts): argv host, port; IPC "block", "unblock", "stop". */
import { startTcpProxy } from "./tcp-proxy.ts";

const [host, port] = process.argv.slice(2);
const proxy = await startTcpProxy({ host: host ?? "127.0.0.1", port: Number(port) });
process.on("message", async (message) => {
  if (message === "block") proxy.block();
  else if (message === "unblock") proxy.unblock();
  else if (message === "stop") {
    await proxy.stop();
    process.exit(0);
  }
  process.send?.({ done: message });
});
// The test ended without stopping it: go with it.
process.on("disconnect", () => process.exit(0));
process.send?.({ port: proxy.port });
