package io.stasis.fs.linux;

import static org.assertj.core.api.Assertions.assertThat;

import io.stasis.core.files.FileEvent.Kind;
import io.stasis.core.files.FileType;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class EventBatchTest {
    private final EventBatch batch = new EventBatch();

    @Test
    void repeatedModificationsOfOnePathAreOne() {
        for (int i = 0; i < 100; i++) batch.add(modify("log"));
        batch.add(modify("other"));
        batch.add(modify("log"));

        assertThat(drain()).containsExactly("modify log", "modify other");
    }

    @Test
    void aCreationAbsorbsTheModificationsThatFollowIt() {
        batch.add(create("f"));
        batch.add(modify("f"));
        batch.add(modify("f"));

        assertThat(drain()).containsExactly("create f");
    }

    @Test
    void createdThenDeletedInOneWindowIsNothing() {
        batch.add(create("tmp"));
        batch.add(modify("tmp"));
        batch.add(delete("tmp"));
        batch.add(create("kept"));

        assertThat(drain()).containsExactly("create kept");
    }

    @Test
    void aDeletionDropsEarlierModificationsOfAnExistingFile() {
        batch.add(modify("f"));
        batch.add(modify("g"));
        batch.add(delete("f"));

        assertThat(drain()).containsExactly("modify g", "delete f");
    }

    @Test
    void deletedThenCreatedAgainIsBoth() {
        batch.add(delete("f"));
        batch.add(create("f"));
        batch.add(modify("f"));

        assertThat(drain()).containsExactly("delete f", "create f");
    }

    @Test
    void aRepeatedCreationIsDropped() {
        batch.add(create("d/x"));
        batch.add(create("d/x"));

        assertThat(drain()).containsExactly("create d/x");
    }

    @Test
    void aFileCreatedAndMovedInOneWindowIsCreatedAtItsDestination() {
        batch.add(create(".f.tmp"));
        batch.add(modify(".f.tmp"));
        batch.add(move(".f.tmp", "f", Optional.empty()));

        assertThat(drain()).containsExactly("create f");
    }

    @Test
    void aMoveOfAnExistingFileStaysAMove() {
        batch.add(modify("a"));
        batch.add(move("a", "b", Optional.empty()));
        batch.add(modify("b"));

        assertThat(drain()).containsExactly("modify a", "move a -> b", "modify b");
    }

    @Test
    void aDirectoryCreatedAndMovedKeepsTheHistoryOfWhatIsInside() {
        batch.add(create("d", FileType.DIRECTORY));
        batch.add(create("d/x"));
        batch.add(move("d", "e", Optional.of(FileType.DIRECTORY)));

        assertThat(drain()).containsExactly("create d", "create d/x", "move d -> e");
    }

    @Test
    void aDirectoryTreeCreatedAndRemovedInOneWindowIsNothing() {
        batch.add(create("d", FileType.DIRECTORY));
        batch.add(create("d/e", FileType.DIRECTORY));
        batch.add(create("d/e/f"));
        batch.add(delete("d/e/f"));
        batch.add(delete("d/e", FileType.DIRECTORY));
        batch.add(delete("d", FileType.DIRECTORY));

        assertThat(drain()).isEmpty();
    }

    @Test
    void aDirectoryDeletedWithReportedContentKeepsItsCreation() {
        batch.add(create("d", FileType.DIRECTORY));
        batch.add(create("d/x"));
        batch.add(delete("d", FileType.DIRECTORY)); // moved out of the tree with d/x in it

        assertThat(drain()).containsExactly("create d", "create d/x", "delete d");
    }

    @Test
    void drainingEmptiesTheBatch() {
        batch.add(create("f"));
        assertThat(batch.isEmpty()).isFalse();
        drain();

        assertThat(batch.isEmpty()).isTrue();
        assertThat(batch.slots()).isZero();
        batch.add(modify("f"));
        assertThat(drain()).containsExactly("modify f");
    }

    @Test
    void insideMeansStrictlyBelowADirectory() {
        assertThat(EventBatch.isInside("a", "a/b")).isTrue();
        assertThat(EventBatch.isInside("a", "a")).isFalse();
        assertThat(EventBatch.isInside("a", "ab/c")).isFalse();
        assertThat(EventBatch.isInside("", "a")).isTrue();
        assertThat(EventBatch.isInside("", "")).isFalse();
    }

    private List<String> drain() {
        return batch.drain().stream()
                .map(c -> c.kind().wireName() + " " + c.from().map(f -> f + " -> ").orElse("") + c.path())
                .toList();
    }

    private static Change create(String path) {
        return Change.of(Kind.CREATE, path, Optional.empty());
    }

    private static Change create(String path, FileType type) {
        return Change.of(Kind.CREATE, path, Optional.of(type));
    }

    private static Change modify(String path) {
        return Change.of(Kind.MODIFY, path, Optional.empty());
    }

    private static Change delete(String path) {
        return Change.of(Kind.DELETE, path, Optional.of(FileType.FILE));
    }

    private static Change delete(String path, FileType type) {
        return Change.of(Kind.DELETE, path, Optional.of(type));
    }

    private static Change move(String from, String to, Optional<FileType> type) {
        return Change.move(from, to, type);
    }
}
