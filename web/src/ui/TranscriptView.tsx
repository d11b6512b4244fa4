import { Component } from "preact";
import { useEffect, useLayoutEffect, useRef, useState } from "preact/hooks";
import type { Transcript, TranscriptRow } from "../chat/transcript.js";
import { whenHighlighterLoads } from "../content/markdown.js";
import { AgentLinkDialog } from "./AgentLink.js";
import type { AnswerQuestion } from "./answering.js";
import { copiedCode } from "./code-copy.js";
import { forgetRenderings } from "./rendered-markdown.js";
import { TranscriptEntryView } from "./TranscriptEntry.js";
import { useFrameRender } from "./use-frame-render.js";
import { useVirtualizer } from "./use-virtualizer.js";

/** How close to the end (px) counts as following the conversation, so new text scrolls into view. */
const FOLLOW_SLACK_PX = 48;

/**
 * The conversation, virtualized: only the rows in and near the viewport are in the page, and the
 * view renders at most once per frame however fast chunks arrive. While the person is at the end
 * it follows new text; scrolled up, it stays put and offers a way back.
 */
export function TranscriptView({
  transcript,
  empty,
  sent,
  onAnswer,
  writable,
}: {
  transcript: Transcript;
  empty: string;
  sent: number;
  onAnswer: AnswerQuestion;
  /** What the session's sandbox lets it write (its tool calls explain a write refused elsewhere); null without one. */
  writable: readonly string[] | null;
}) {
  const scroller = useRef<HTMLDivElement>(null);
  const renderNextFrame = useFrameRender();
  const [highlight, setHighlight] = useState(0);
  useEffect(() => {
    const unsubscribe = transcript.subscribe(renderNextFrame);
    // What changed between the first render and this subscription.
    renderNextFrame();
    return unsubscribe;
  }, [transcript, renderNextFrame]);
  useEffect(
    () =>
      whenHighlighterLoads(() => {
        forgetRenderings();
        setHighlight((n) => n + 1);
      }),
    [],
  );

  const rows = transcript.rows();
  const virtualizer = useVirtualizer(
    {
      count: rows.length,
      getScrollElement: () => scroller.current,
      estimateSize: (index) => estimate(rows[index]!),
      getItemKey: (index) => rows[index]!.key,
      // A row can be 8 kB of text: each one laid out beyond the viewport costs every frame of a long reply.
      overscan: 2,
    },
    renderNextFrame,
  );
  const items = virtualizer.getVirtualItems();

  // Following the end (where a conversation opens, and new text arrives) until the person scrolls up;
  // reaching the end again, or "Latest", follows again. Only the person's own scrolling stops it.
  const [following, setFollowing] = useState(true);
  useLayoutEffect(() => {
    // Straight to the bottom: cheaper than the virtualizer's scrollToIndex, which settles over several frames.
    const element = scroller.current;
    if (following && element && rows.length > 0) element.scrollTop = element.scrollHeight;
  });
  // Sending a message goes back to the end, where its answer will be.
  useEffect(() => setFollowing(true), [sent]);
  const scrolledUp = (): void => setFollowing(false);
  // A link in the agent's text is followed only once the person saw where it leads (a click, Enter, or a middle click).
  const [leavingFor, setLeavingFor] = useState<string | null>(null);
  const followed = (event: MouseEvent): void => {
    if (event.type === "click" && copiedCode(event)) return;
    const link = (event.target as Element).closest(".md a[href]");
    if (!link || (event.type === "auxclick" && event.button !== 1)) return;
    event.preventDefault();
    setLeavingFor(link.getAttribute("href"));
  };
  const scrolled = (): void => {
    const element = scroller.current!;
    if (!following && element.scrollHeight - element.scrollTop - element.clientHeight < FOLLOW_SLACK_PX) setFollowing(true);
  };

  return (
    <div class="transcript-frame">
      <div
        ref={scroller}
        class="transcript"
        role="log"
        aria-label="Conversation"
        // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrollable region must be reachable by keyboard to scroll it
        tabIndex={0}
        data-rows={rows.length}
        onScroll={scrolled}
        onWheel={(event) => event.deltaY < 0 && scrolledUp()}
        onTouchMove={scrolledUp}
        onPointerDown={(event) => event.target === event.currentTarget && scrolledUp()}
        onKeyDown={(event) => ["ArrowUp", "PageUp", "Home"].includes(event.key) && scrolledUp()}
        onClick={followed}
        onAuxClick={followed}
      >
        {rows.length === 0 ? (
          <p class="empty">{empty}</p>
        ) : (
          <div class="transcript-space" style={{ height: `${virtualizer.getTotalSize()}px` }}>
            <div class="transcript-rows" style={{ transform: `translateY(${items[0]?.start ?? 0}px)` }}>
              {items.map((item) => {
                const row = rows[item.index]!;
                return (
                  <div key={item.key} class={row.last ? "row last" : "row"} data-index={item.index} ref={virtualizer.measureElement}>
                    <RowView
                      uid={transcript.uid}
                      row={row}
                      version={row.part >= 0 && row.entry.kind === "message" ? 0 : row.entry.version}
                      highlight={highlight}
                      onAnswer={onAnswer}
                      writable={writable}
                    />
                  </div>
                );
              })}
            </div>
          </div>
        )}
      </div>
      {following ? null : (
        <button type="button" class="jump-latest" onClick={() => setFollowing(true)}>
          ↓ Latest
        </button>
      )}
      {leavingFor === null ? null : <AgentLinkDialog url={leavingFor} onClose={() => setLeavingFor(null)} />}
    </div>
  );
}

interface RowProps {
  uid: number;
  row: TranscriptRow;
  /** The entry's version when it can still change (a finished block cannot). */
  version: number;
  highlight: number;
  /** Stable for the view's life: not compared. */
  onAnswer: AnswerQuestion;
  /** Kept as one array while its paths stay the same (ChatPanel), so compared by identity. */
  writable: readonly string[] | null;
}

/** A row renders again only when what it shows changed: the hot path of a long reply touches one row per frame. */
class RowView extends Component<RowProps> {
  override shouldComponentUpdate(next: RowProps): boolean {
    const { row, version, highlight, writable } = this.props;
    return (
      next.row.entry !== row.entry ||
      next.row.part !== row.part ||
      next.row.first !== row.first ||
      next.row.last !== row.last ||
      next.version !== version ||
      next.highlight !== highlight ||
      next.writable !== writable
    );
  }

  override render({ uid, row, onAnswer, writable }: RowProps) {
    return <TranscriptEntryView uid={uid} row={row} onAnswer={onAnswer} writable={writable} />;
  }
}

/** A first guess of a row's height, replaced by its measured height once shown. */
function estimate(row: TranscriptRow): number {
  const entry = row.entry;
  if (entry.kind === "message") {
    const chars = row.part >= 0 ? (entry.segments.blocks[row.part]?.length ?? 0) : entry.segments.tail.length;
    return 30 + Math.ceil(chars / 80) * 22;
  }
  return entry.kind === "tool" ? 140 : 48;
}
