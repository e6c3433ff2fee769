/**
 * HTTP/1.1 message framing for the two proxies that read HTTP: the preview proxy (in front of a
 * sandbox's ports) and the egress proxy's interception of HTTPS for header rules (in front of any
 * server on the internet). Both sit between two parties that parse HTTP on their own, so the one
 * danger is that the proxy and the party behind it split a byte stream into messages differently
 * (request smuggling, response splitting). Where RFC 9112 leaves a choice, this package takes the
 * one that cannot be read two ways, and refuses what it cannot frame unambiguously with an
 * {@link io.stasis.http1.HttpFramingException}.
 *
 * <ul>
 *   <li>{@link io.stasis.http1.HttpInput}: the buffered stream messages are read from, over any
 *       {@code InputStream}; lines are found by scanning its buffer, bodies read in blocks.</li>
 *   <li>{@link io.stasis.http1.HeadReader}: request and response heads
 *       ({@link io.stasis.http1.RequestHead}, {@link io.stasis.http1.ResponseHead},
 *       {@link io.stasis.http1.HttpHeaders}), bounded in line length, field count and size.</li>
 *   <li>{@link io.stasis.http1.BodyFraming}: where a body ends (RFC 9112 section 6.3).</li>
 *   <li>{@link io.stasis.http1.BodyRelay}: copies a body as framed, and not a byte further.</li>
 * </ul>
 *
 * <h2>Choices</h2>
 * <p>The two framers this package replaced differed on two points; both now take the stricter form.
 * <ul>
 *   <li><b>A line ends in CRLF; a bare LF is refused</b>, in heads, chunk-size lines and trailers.
 *       RFC 9112 section 2.2 lets a recipient recognise a bare LF as a line end, but a proxy that
 *       does so and forwards to a server that does not (or the reverse) reads a different set of
 *       header fields or a different chunk boundary than that server: the classic smuggling
 *       vector. Refusing costs nothing with real clients and servers, which all send CRLF. A bare
 *       CR is refused too (section 2.2 allows replacing it with SP; refusing is simpler and as
 *       safe).</li>
 *   <li><b>Chunked bodies are re-framed</b>: each chunk-size line is written anew as plain
 *       hexadecimal, its extensions dropped, and each trailer field is parsed like a header field
 *       and written as {@code name: value}. Section 7.1.1 lets a recipient ignore extensions it does
 *       not understand, and what reaches the next hop is then exactly the framing this package
 *       understood: no odd whitespace, leading zeros, extension syntax or malformed trailer line
 *       for the next parser to read differently. Copying the lines through would forward whatever
 *       ambiguity they held.</li>
 * </ul>
 * <p>And everywhere: a message with both Transfer-Encoding and Content-Length is refused (requests
 * and responses: section 6.3 calls it a likely attack, and refusing is simpler than removing the
 * length), as are differing or malformed Content-Length values (a repeated equal value is one
 * length), a request whose transfer coding does not end in chunked, chunked applied twice or not
 * last, and Transfer-Encoding in an HTTP/1.0 message (section 6.1: its framing is to be treated as
 * faulty). Field names are tokens with the colon right after them (no obs-fold, no space before
 * the colon); control characters other than HTAB are refused in heads. Empty lines before a
 * request line are skipped (section 2.2), before a status line refused. Heads are bounded: lines
 * of {@value io.stasis.http1.HeadReader#MAX_LINE_BYTES} bytes, {@value io.stasis.http1.HeadReader#MAX_FIELDS}
 * fields, {@value io.stasis.http1.HeadReader#MAX_HEAD_BYTES} bytes in all.
 *
 * <p>Nothing here logs, and {@link io.stasis.http1.HttpHeaders#toString()} names fields without
 * their values (header rules put secrets in them). The module depends on the JDK alone.
 */
package io.stasis.http1;
