import { methods } from "@agentclientprotocol/sdk";
import { describe, expect, it } from "vitest";
import { rememberUpdateText } from "../../src/protocol/update-text.js";
import { notificationFrame, sessionUpdateParams } from "../../src/server/shared-frames.js";

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

  it("frames an update remembered with its text as that text, for the very _meta it carries only", () => {
    const update = { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "a\u2028b" } };
    const meta = { vendor: 1 };
    rememberUpdateText(
      update,
      meta,
      '{"update":{ "sessionUpdate":"agent_message_chunk" ,"content":{"type":"text","text":"a\\u2028b"} },"_meta":{ "vendor":1 }}',
    );
    const frame = notificationFrame(methods.client.session.update, sessionUpdateParams('s"1', update, meta));
    expect(frame).toBe(
      '{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s\\"1","update":{ "sessionUpdate":"agent_message_chunk" ,"content":{"type":"text","text":"a\\u2028b"} },"_meta":{ "vendor":1 }}}',
    );
    expect(JSON.parse(frame)).toEqual({ jsonrpc: "2.0", method: "session/update", params: { sessionId: 's"1', update, _meta: meta } });
    // Other _meta (a client shown the journal's seq), or none: not what the text says; serialised.
    const seq = { ...meta, "berth/seq": 4 };
    expect(notificationFrame(methods.client.session.update, sessionUpdateParams("s1", update, seq))).toBe(
      JSON.stringify({ jsonrpc: "2.0", method: "session/update", params: { sessionId: "s1", update, _meta: seq } }),
    );
    expect(notificationFrame(methods.client.session.update, sessionUpdateParams("s1", update, undefined))).toBe(
      JSON.stringify({ jsonrpc: "2.0", method: "session/update", params: { sessionId: "s1", update } }),
    );
  });
});
