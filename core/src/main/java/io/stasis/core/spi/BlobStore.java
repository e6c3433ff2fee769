package io.stasis.core.spi;

import java.io.ByteArrayInputStream;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Collections;
import java.util.Iterator;
import java.util.NoSuchElementException;
import java.util.Optional;
import java.util.Spliterator;
import java.util.Spliterators;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import java.util.stream.StreamSupport;

/**
 * Raw objects under string keys: a local directory or an S3-compatible bucket. Nothing here knows
 * about chunks or manifests; the content-addressed store is built above this SPI, so every backend
 * only has to get five verbs right, and {@code BlobStoreSuite} (testkit) holds each one to them.
 *
 * <p><b>Keys</b> are ASCII segments of letters, digits, {@code . _ -} separated by single
 * {@code /}; no segment is empty or starts with a dot (backends keep their own files there). With
 * this alphabet, key order is the same in every backend (S3 orders by UTF-8 bytes): listings are
 * sorted and pages are stable. A bad key is a programming error: {@link IllegalArgumentException}.
 * Do not use a key that is also a directory of another ({@code a} beside {@code a/b}): a directory
 * backend cannot hold both, and refuses the second put.
 *
 * <p><b>Failures.</b> {@link UncheckedIOException} means the backend could not be reached or an
 * I/O failed: the same call may succeed if retried, and callers above (the content store) do
 * retry it with backoff. Anything else (a {@code StasisException} such as {@code runtime_failed}
 * for a refused credential or a missing bucket) is not worth retrying.
 *
 * <p><b>Consistency.</b> A put is atomic: readers see the old object or the new one, never a part;
 * a failed or interrupted put leaves the old object (or none). Once {@code put} returns, get, head
 * and list see the new object (read-after-write, as S3 has been since 2020).
 */
public interface BlobStore extends AutoCloseable {

    /** Letters, digits, {@code . _ -}; segments separated by one slash; no segment starts with a dot. */
    Pattern KEY = Pattern.compile("[A-Za-z0-9_-][A-Za-z0-9._-]*(/[A-Za-z0-9_-][A-Za-z0-9._-]*)*");

    /** The longest key any backend accepts (S3's limit is 1024 bytes; a local name 255 per segment). */
    int MAX_KEY_LENGTH = 512;

    /**
     * Stores {@code length} bytes read from {@code content} under {@code key}, replacing any object
     * there.
     * <p>Prerequisites: {@code content} yields exactly {@code length} bytes; the caller closes it.
     * <p>Effects on success: the object is durable and visible whole to every later call.
     * <p>On failure (the stream throws, ends early or runs long, the backend fails): no side
     * effects; a previous object under the key stays as it was.
     */
    void put(String key, InputStream content, long length);

    /** {@link #put(String, InputStream, long)} for bytes at hand. */
    default void put(String key, byte[] content) {
        put(key, new ByteArrayInputStream(content), content.length);
    }

    /**
     * The object's bytes as a stream the caller must close, or empty when there is no object.
     * The stream reads the object as it was when opened, even if it is replaced meanwhile.
     */
    Optional<InputStream> get(String key);

    /** Size and last-modified time of the object, or empty when there is none. */
    Optional<BlobInfo> head(String key);

    default boolean exists(String key) {
        return head(key).isPresent();
    }

    /**
     * One page of the objects whose keys start with {@code prefix} (any string, not only whole
     * segments), in ascending key order.
     *
     * @param pageToken empty for the first page, else the {@link BlobPage#nextPageToken()} of the
     *                  page before (opaque: only the backend that issued it understands it)
     * @param maxKeys   at most this many objects (1 to 1000); a page may hold fewer
     */
    BlobPage list(String prefix, Optional<String> pageToken, int maxKeys);

    /** Every object under {@code prefix}, fetching pages lazily as the stream is consumed. */
    default Stream<BlobInfo> listAll(String prefix) {
        Iterator<BlobInfo> pages = new Iterator<>() {
            private Iterator<BlobInfo> current = Collections.emptyIterator();
            private Optional<String> token = Optional.empty();
            private boolean last;

            @Override
            public boolean hasNext() {
                while (!current.hasNext() && !last) {
                    BlobPage page = list(prefix, token, 1000);
                    current = page.blobs().iterator();
                    token = page.nextPageToken();
                    last = token.isEmpty();
                }
                return current.hasNext();
            }

            @Override
            public BlobInfo next() {
                if (!hasNext()) throw new NoSuchElementException();
                return current.next();
            }
        };
        return StreamSupport.stream(Spliterators.spliteratorUnknownSize(pages, Spliterator.ORDERED | Spliterator.NONNULL), false);
    }

    /** Removes the object. Idempotent: removing a missing key succeeds. */
    void delete(String key);

    /** Releases connections and threads. The store is unusable afterwards. */
    @Override
    default void close() {
    }

    /** Returns {@code key} if it is valid (see the class comment), else throws {@link IllegalArgumentException}. */
    static String checkKey(String key) {
        if (key == null || key.length() > MAX_KEY_LENGTH || !KEY.matcher(key).matches())
            throw new IllegalArgumentException("not a blob key: '" + key + "' (segments of [A-Za-z0-9._-] joined by '/', "
                    + "none empty or starting with '.', at most " + MAX_KEY_LENGTH + " characters)");
        return key;
    }

    /** Returns {@code prefix} if some valid key could start with it (the empty prefix lists everything). */
    static String checkPrefix(String prefix) {
        if (prefix == null) throw new IllegalArgumentException("prefix is null");
        if (!prefix.isEmpty()) checkKey(prefix.endsWith("/") ? prefix + "x" : prefix);
        return prefix;
    }

    /** Returns {@code maxKeys} if it is a valid page size. */
    static int checkPageSize(int maxKeys) {
        if (maxKeys < 1 || maxKeys > 1000) throw new IllegalArgumentException("maxKeys must be 1 to 1000, was " + maxKeys);
        return maxKeys;
    }
}
