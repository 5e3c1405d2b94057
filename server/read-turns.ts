/**
 * @module server/read-turns
 * Reads take turns with the rest of the event loop. A read of the embedded database runs synchronously from its
 * first statement to its serialised response (a list of 50 messages of 10 KB is a few milliseconds of CPU), and every
 * request that arrived in one poll of the loop starts before any other I/O is looked at: 20 clients listing at once
 * were 20 reads back to back between two looks at the SMTP sockets, and ingest fell from hundreds of messages a second
 * to 6 (issue 21).
 *
 * Here each read waits for its own turn of the loop (`setImmediate`), one read a turn, so that between two reads the
 * loop answers SMTP commands, takes results from the mail writer thread and runs timers. And when the loop has other
 * work (the time between the end of one read and the next turn is more than {@link BUSY_GAP_MS}), reads take at most
 * {@link BUSY_READ_SHARE} of its time: the next read waits, turn after turn, until enough time has passed since the
 * last read ended (twice what that read took, for a third). Other work then runs in short turns (an SMTP session needs a turn for each of its commands), and a
 * loop that has nothing else to do still runs reads back to back, so their throughput alone is unchanged.
 *
 * The share only applies while mail is flowing through this process (`mailFlowing`, from the inbound service: a
 * recipient checked or a message delivered in the last moments). Without it, the gap between two reads is the loop
 * writing the last large response and parsing the next requests, which is the reads' own work: holding reads to a
 * third of the time then only idled the loop (a process with the `http` role alone never holds reads back). Nor do
 * reads then wait for a turn of the loop at all: with no mail flowing and no read waiting, a read goes at once (a turn
 * of the loop per read was a fifth of a short list's time), and the first SMTP command of a new session waits at most
 * for the reads of one poll; from its recipient on, mail is flowing and reads take turns again.
 */

/**
 * Time between two reads above which the loop is taken to have had other work in between (the next request of a
 * client whose read just ended costs about 0.1 ms to parse and authenticate; an SMTP command or a writer result more).
 */
export const BUSY_GAP_MS = 0.5;

/**
 * The share of a busy loop's time reads may take. Ingest needs the rest and more than the event loop: the mail writer
 * thread commits on the same CPU. With a half, ingest under full list load kept 33–48% of its unloaded rate here;
 * with a third, about half (bench/read-path.bench.ts).
 */
export const BUSY_READ_SHARE = 1 / 3;

/** A read's turn: call `end()` once its response is built. */
export interface ReadTurn {
  end(): void;
}

/** The queue of reads waiting for a turn. */
export interface ReadTurns {
  /**
   * This read's turn (see the module comment): at once, not a promise, when no mail is flowing and no read waits;
   * otherwise a promise of it.
   */
  take(): ReadTurn | Promise<ReadTurn>;
  /** Reads waiting now. */
  waiting(): number;
}

/** Creates a queue of reads that run one per turn of the event loop, and at most half of it when it is busy. */
export function createReadTurns(
  now: () => number = () => performance.now(),
  mailFlowing: () => boolean = () => true,
): ReadTurns {
  const queue: ((turn: ReadTurn) => void)[] = [];
  let scheduled = false;
  /** When the last read ended, and how long it took. */
  let lastEnd = -Infinity;
  let lastDuration = 0;
  /** Whether the loop had other work since the last read (decided at the first turn after it). */
  let busy: boolean | undefined;

  const schedule = () => {
    scheduled = true;
    setImmediate(next);
  };
  const next = () => {
    scheduled = false;
    if (queue.length === 0) return;
    const at = now();
    const since = at - lastEnd;
    busy ??= since > BUSY_GAP_MS && mailFlowing();
    // Busy: let the other work have its share of the time, measured by what the last read took.
    if (busy && since < (lastDuration * (1 - BUSY_READ_SHARE)) / BUSY_READ_SHARE) return schedule();
    const resolve = queue.shift()!;
    let ended = false;
    // A read still running at the next turn (one that awaits real I/O: a libSQL server) does not hold the others back.
    setImmediate(() => {
      if (!ended && queue.length > 0 && !scheduled) schedule();
    });
    resolve({
      end() {
        if (ended) return;
        ended = true;
        // Timed once the promise jobs of this turn are done: the server writes the response in them (for a list of
        // 10 KB messages, as long as a third of the read), and that is the read's own time, not other work.
        process.nextTick(() => {
          lastEnd = now();
          lastDuration = lastEnd - at;
          busy = undefined;
          // The next read's turn is queued after whatever this read queued, and comes after the loop polled for I/O.
          if (queue.length > 0 && !scheduled) schedule();
        });
      },
    });
  };
  return {
    take() {
      if (queue.length === 0 && !scheduled && !mailFlowing()) {
        // Timed as any read, so that the share holds from the first read after mail starts flowing.
        const at = now();
        return {
          end: () => process.nextTick(() => ((lastEnd = now()), (lastDuration = lastEnd - at), (busy = undefined))),
        };
      }
      return new Promise<ReadTurn>((resolve) => {
        queue.push(resolve);
        if (!scheduled) schedule();
      });
    },
    waiting: () => queue.length,
  };
}
