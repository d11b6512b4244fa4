import { methods } from "@agentclientprotocol/sdk";
import { describe, expect, it } from "vitest";
import { notificationFrame, sessionUpdateParams, updateTextFrame } from "../../src/server/shared-frames.js";

describe("shared frames: one serialisation of an update for every client shown it as it is", () => {
  it("gives the same params object for the same session, update and _meta, and a new one when any differs", () => {
    const update = { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "hi" } };
    const meta = { "berth/seq": 3 };
    const params = sessionUpdateParams("s1", update, meta);
    expect(params).toEqual({ sessionId: "s1", update, _meta: meta });
    expect(sessionUpdateParams("s1", update, meta)).toBe(params);
    // A client that reads seqs gets its own _meta object: its own params.
    expect(sessionUpdateParams("s1", update, { "berth/seq": 3 })).not.toBe(params);
    expect(sessionUpdateParams("s2", update, meta)).toEqual({ sessionId: "s2", update, _meta: meta });
    expect(sessionUpdateParams("s1", update, undefined)).toEqual({ sessionId: "s1", update });
    expect(sessionUpdateParams("s1", update, null)).toEqual({ sessionId: "s1", update });
  });

  it("serialises a session/update params object once, and every other notification each time, as JSON-RPC", () => {
    const params = sessionUpdateParams("s1", { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "é\n" } }, null);
    const frame = notificationFrame(methods.client.session.update, params);
    expect(JSON.parse(frame)).toEqual({ jsonrpc: "2.0", method: "session/update", params });
    expect(notificationFrame(methods.client.session.update, params)).toBe(frame);
    // Other methods' params may be reused with other content: never cached.
    const other = { value: 1 };
    expect(JSON.parse(notificationFrame("_vendor/ping", other))).toEqual({ jsonrpc: "2.0", method: "_vendor/ping", params: { value: 1 } });
    other.value = 2;
    expect(JSON.parse(notificationFrame("_vendor/ping", other)).params).toEqual({ value: 2 });
  });

  it("frames an update's own text in the envelope as it is, after Berth's session id", () => {
    const text = '{"update":{ "sessionUpdate":"agent_message_chunk" ,"content":{"type":"text","text":"a\\u2028b"} },"_meta":{ "vendor":1 }}';
    const frame = updateTextFrame(JSON.stringify('s"1'), text);
    expect(frame).toBe(
      '{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s\\"1","update":{ "sessionUpdate":"agent_message_chunk" ,"content":{"type":"text","text":"a\\u2028b"} },"_meta":{ "vendor":1 }}}',
    );
    expect(JSON.parse(frame)).toEqual({
      jsonrpc: "2.0",
      method: "session/update",
      params: {
        sessionId: 's"1',
        update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "a\u2028b" } },
        _meta: { vendor: 1 },
      },
    });
  });
});
