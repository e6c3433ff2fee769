package io.stasis.storage.btrfs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.LongStream;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.LongRange;
import net.jqwik.api.constraints.Size;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class LineageTest {
    @TempDir
    Path dir;

    @Property
    void whatIsEncodedDecodesToTheSame(@ForAll @Size(min = 1, max = 50) List<@LongRange(min = 1) Long> ids) {
        var lineage = new Lineage(ids);
        assertThat(Lineage.decode(lineage.encode())).isEqualTo(lineage);
    }

    @Property
    void qgroupsRoundTripThroughEveryForm(@ForAll @LongRange(min = 0, max = 0xffff) long level, @ForAll @LongRange(min = 0, max = (1L << 48) - 1) long id) {
        var group = new Qgroup((int) level, id);
        assertThat(Qgroup.unpacked(group.packed())).isEqualTo(group);
        assertThat(Qgroup.parse(group.toString())).isEqualTo(group);
        assertThat(Qgroup.parse(group.level() + "_" + group.id())).isEqualTo(group);
    }

    @Test
    void aBranchNamesItselfFirstAndKeepsTheNearestAncestorsOnly() {
        var root = Lineage.of(300);
        var checkpoint = root.branch(301);
        var fork = checkpoint.branch(302);
        assertThat(fork.ids()).containsExactly(302L, 301L, 300L);
        assertThat(fork.self()).isEqualTo(302);
        assertThat(fork.distanceTo(301)).isEqualTo(1);
        assertThat(fork.distanceTo(300)).isEqualTo(2);
        assertThat(fork.distanceTo(302)).isEqualTo(-1);
        assertThat(fork.distanceTo(7)).isEqualTo(-1);

        var long_ = new Lineage(LongStream.rangeClosed(1, Lineage.MAX_IDS).boxed().toList()).branch(5000);
        assertThat(long_.ids()).hasSize(Lineage.MAX_IDS).startsWith(5000L, 1L).doesNotContain((long) Lineage.MAX_IDS);
    }

    @Test
    void theFileIsReadBackMovedAndDeletedAndABadOneIsNone() throws Exception {
        Path root = Files.createDirectory(dir.resolve("sbx_1"));
        assertThat(Lineage.read(root)).isEmpty();
        new Lineage(List.of(9L, 8L)).writeFor(root);
        assertThat(Lineage.fileOf(root)).hasContent("9 8");
        assertThat(Lineage.read(root)).contains(new Lineage(List.of(9L, 8L)));
        Path aside = dir.resolve("sbx_1.replaced");
        Lineage.move(root, aside);
        assertThat(Lineage.read(root)).isEmpty();
        assertThat(Lineage.read(aside)).contains(new Lineage(List.of(9L, 8L)));
        Lineage.move(root, aside); // nothing to move
        Lineage.deleteFor(aside);
        assertThat(Lineage.read(aside)).isEmpty();
        assertThat(dir).isDirectoryNotContaining("glob:**.tmp");

        Files.writeString(Lineage.fileOf(root), "9 x"); // cut short, or not ours
        assertThat(Lineage.read(root)).isEmpty();
        Files.writeString(Lineage.fileOf(root), "");
        assertThat(Lineage.read(root)).isEmpty();
        assertThatThrownBy(() -> new Lineage(List.of(0L))).isInstanceOf(IllegalArgumentException.class);
    }
}
