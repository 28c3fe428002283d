/** Installs the lean client-node hooks when preloaded (`node --import`), before the program's first module. */
import { useLeanClientNode } from "./lean-client-node.ts";

useLeanClientNode();
