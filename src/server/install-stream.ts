import type { ServerResponse } from "node:http";
import type { Host } from "../host/host.js";
import { EventStreams, sseFrame } from "./event-streams.js";

/**
 * `GET /api/agents/installs/:id/events`: the install's events so far, then each as it comes, as Server-Sent
 * Events; the stream closes after the end (`done` or `failed`). Throws, answering nothing, for an unknown install.
 */
export function streamInstall(host: Host, installId: string, res: ServerResponse): void {
  const told: string[] = [];
  let ended = false;
  let stream: EventStreams | undefined;
  const stop = host.followAgentInstall(installId, ({ kind, ...data }) => {
    ended = kind !== "progress";
    if (!stream) told.push(sseFrame(kind, data));
    else {
      stream.broadcast(kind, data);
      if (ended) stream.close();
    }
  });
  // One stream of its own: its keep-alive comments last as long as the install does.
  stream = new EventStreams(15_000, 0);
  stream.attach(res, told.join(""));
  if (ended) stream.close();
  res.on("close", () => {
    stop();
    stream.close();
  });
}
