package io.stasis.sdk;

/**
 * A piece of a template build's output: each step's header line ({@code # step 2/5: RUN make})
 * and its command's stdout and stderr as they came, from {@code GET /v1/templates/{name}/logs}.
 * Offsets count bytes from the build's first; the server keeps the last part of a build's output
 * (4 MiB), so a reader that falls behind may find {@link #start} past the offset it asked for.
 *
 * <pre>{@code
 * long at = 0;
 * TemplateLog log;
 * do {
 *     log = client.templates().logs("app", at);
 *     System.out.print(log.output());
 *     at = log.next();
 * } while (!log.output().isEmpty());
 * }</pre>
 *
 * @param start  where {@code output} starts: the offset asked for, or later when the bytes before it were dropped
 * @param output the text (UTF-8), at most 64 KiB of it per read
 * @param next   the offset to read from next
 * @param done   the build has ended and nothing after {@code next} remains
 */
public record TemplateLog(long start, String output, long next, boolean done) {
    public TemplateLog {
        if (output == null) output = "";
    }

    /** How many bytes from {@code askedOffset} the server no longer had (0 when none). */
    public long droppedAfter(long askedOffset) {
        return Math.max(0, start - askedOffset);
    }
}
