package io.stasis.sdk;

import java.util.Collections;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.Spliterator;
import java.util.Spliterators;
import java.util.function.Function;
import java.util.stream.Stream;
import java.util.stream.StreamSupport;

/**
 * One page of a list call, able to fetch the pages after it.
 *
 * <pre>{@code
 * Page<Sandbox> page = client.sandboxes().list();
 * for (Sandbox s : page.all()) {          // walks every following page lazily
 *     System.out.println(s.id());
 * }
 * List<String> ids = page.stream().map(Sandbox::id).toList();
 * }</pre>
 *
 * @param <T> the item type
 */
public final class Page<T> {
    private final List<T> items;
    private final String nextCursor;
    private final Function<String, Page<T>> fetchAfter;

    Page(List<T> items, String nextCursor, Function<String, Page<T>> fetchAfter) {
        this.items = items == null ? List.of() : Collections.unmodifiableList(items);
        this.nextCursor = nextCursor == null || nextCursor.isEmpty() ? null : nextCursor;
        this.fetchAfter = fetchAfter;
    }

    /** The items of this page only. */
    public List<T> items() {
        return items;
    }

    /** The cursor for the next page, or null on the last page. */
    public String nextCursor() {
        return nextCursor;
    }

    public boolean hasNextPage() {
        return nextCursor != null;
    }

    /** Fetches the next page. @throws NoSuchElementException on the last page */
    public Page<T> nextPage() {
        if (nextCursor == null) throw new NoSuchElementException("this is the last page");
        return fetchAfter.apply(nextCursor);
    }

    /** The items of this page and of every page after it, fetched as the iteration reaches them. */
    public Iterable<T> all() {
        return () -> new Iterator<>() {
            private Page<T> page = Page.this;
            private Iterator<T> current = page.items.iterator();

            @Override
            public boolean hasNext() {
                // A server may return an empty page with a cursor: keep going until items or the end.
                while (!current.hasNext() && page.hasNextPage()) {
                    page = page.nextPage();
                    current = page.items.iterator();
                }
                return current.hasNext();
            }

            @Override
            public T next() {
                if (!hasNext()) throw new NoSuchElementException();
                return current.next();
            }
        };
    }

    /** {@link #all()} as a sequential stream. */
    public Stream<T> stream() {
        return StreamSupport.stream(Spliterators.spliteratorUnknownSize(all().iterator(), Spliterator.ORDERED), false);
    }

    /** The wire shape {@code {"items": [...], "nextCursor": ...}}. */
    record Body<T>(List<T> items, String nextCursor) {
    }
}
