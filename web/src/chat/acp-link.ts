import {
  client,
  methods,
  PROTOCOL_VERSION,
  type ClientConnection,
  type CreateElicitationResponse,
  type RequestPermissionResponse,
  type SessionNotification,
} from "@agentclientprotocol/sdk";
import { createWebSocketStream } from "@agentclientprotocol/sdk/experimental/ws-client";
import { JOURNAL_SEQ_META } from "../../../src/protocol/meta-keys.js";
import { ticketUrl } from "../auth/token.js";

const CLIENT_INFO = { name: "berth-dashboard", title: "Berth dashboard", version: __BERTH_VERSION__ };

export interface AcpLinkHandlers {
  /** A `session/update`, taken off the stream before the SDK's validation (the hot path of a long reply). */
  readonly update: (notification: SessionNotification) => void;
  /** The agent asked a question: it is answered over REST; the request is withdrawn once it is. */
  readonly asked: () => void;
}

/** One WebSocket connection to Berth's `/acp`, initialized. */
export async function connectAcp(handlers: AcpLinkHandlers): Promise<ClientConnection> {
  const waitForWithdrawal = (signal: AbortSignal): Promise<never> => {
    handlers.asked();
    return new Promise((_, reject) => signal.addEventListener("abort", () => reject(signal.reason), { once: true }));
  };
  const app = client({ name: "berth-dashboard" })
    .onRequest(methods.client.session.requestPermission, ({ signal }): Promise<RequestPermissionResponse> => waitForWithdrawal(signal))
    .onRequest(methods.client.elicitation.create, ({ signal }): Promise<CreateElicitationResponse> => waitForWithdrawal(signal));
  // A browser WebSocket cannot send the token in a header: a single-use ticket in the URL instead.
  const socket = createWebSocketStream(await ticketUrl("acp", "ws"));
  const updates = new TransformStream<unknown, unknown>({
    transform(message, controller) {
      const params = updateParams(message);
      if (params) handlers.update(params);
      else controller.enqueue(message);
    },
  });
  const connection = app.connect({ readable: socket.readable.pipeThrough(updates) as typeof socket.readable, writable: socket.writable });
  try {
    await connection.agent.request(methods.agent.initialize, {
      protocolVersion: PROTOCOL_VERSION,
      clientCapabilities: { elicitation: { form: {} }, _meta: { [JOURNAL_SEQ_META]: true } },
      clientInfo: CLIENT_INFO,
    });
  } catch (error) {
    connection.close();
    throw error;
  }
  return connection;
}

/** The params of a well-formed `session/update` notification; anything else goes to the SDK. */
function updateParams(message: unknown): SessionNotification | null {
  const { method, id, params } = message as {
    method?: unknown;
    id?: unknown;
    params?: { sessionId?: unknown; update?: { sessionUpdate?: unknown } };
  };
  if (method !== "session/update" || id !== undefined) return null;
  if (typeof params?.sessionId !== "string" || typeof params.update?.sessionUpdate !== "string") return null;
  return params as SessionNotification;
}
