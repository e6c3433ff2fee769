package io.stasis.templates.oci;

import static org.assertj.core.api.Assertions.assertThat;

import io.stasis.core.spi.FileOwner;
import java.io.ByteArrayInputStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The whole import: an OCI layout tarball of GNU tar layers, read by {@link ImageArchive}, populated by {@link OciImageRecipe}. */
@Tag("root")
class OciImageRecipeIT {
    static final FileOwner BASE = new FileOwner(100000, 100000);

    @TempDir
    Path work;

    @Test
    void anUploadedImageBecomesATreeWithItsOwnersAndItsDefaults() throws Exception {
        Path base = Files.createDirectories(work.resolve("base"));
        Files.createDirectories(base.resolve("etc"));
        Files.writeString(base.resolve("etc/os-release"), "ID=test\n");
        Files.createDirectories(base.resolve("home/app"));
        Files.writeString(base.resolve("home/app/.profile"), "export A=1\n");
        Files.writeString(base.resolve("tmp-file"), "gone in the next layer");
        for (Path p : List.of(base.resolve("home/app"), base.resolve("home/app/.profile"))) {
            Files.setAttribute(p, "unix:uid", 1000, LinkOption.NOFOLLOW_LINKS);
            Files.setAttribute(p, "unix:gid", 1000, LinkOption.NOFOLLOW_LINKS);
        }
        Path app = Files.createDirectories(work.resolve("app"));
        Files.createDirectories(app.resolve("usr/bin"));
        Files.writeString(app.resolve("usr/bin/tool"), "#!/bin/sh\n");
        Files.setAttribute(app.resolve("usr/bin/tool"), "unix:mode", 04755);
        Files.writeString(app.resolve(".wh.tmp-file"), "");
        byte[] baseTar = Files.readAllBytes(HostTools.tar(base, work.resolve("base.tar"), "pax", "--sort=name"));
        byte[] appTar = Files.readAllBytes(HostTools.tar(app, work.resolve("app.tar"), "pax", "--sort=name"));
        byte[] upload = TestImages.gzip(TestImages.ociLayout(TestImages.image(baseTar, appTar)));
        Path template = Files.createDirectories(work.resolve("template"));
        var progress = new CopyOnWriteArrayList<String>();

        try (OciImage image = new ImageArchive(work, 64 << 20, Platform.LINUX_AMD64).read(new ByteArrayInputStream(upload), "upload")) {
            var recipe = new OciImageRecipe("imported", image, BASE, LayerApplier.Limits.DEFAULT);
            recipe.populate(template, (fraction, message) -> progress.add(message));

            assertThat(recipe.name()).isEqualTo("imported");
            assertThat(recipe.version()).isEqualTo(image.id().toString()).startsWith("sha256:");
            assertThat(recipe.description()).startsWith("imported from upload (2 layers, image ");
            assertThat(recipe.report()).hasValueSatisfying(r -> assertThat(r.layers()).isEqualTo(2));
            assertThat(recipe.envMap()).containsEntry("PATH", "/usr/local/bin:/usr/bin:/bin");
            assertThat(recipe.workingDir()).hasValue("/srv/app");
            assertThat(recipe.user()).hasValue("1000:1000");
            assertThat(recipe.command()).containsExactly("/bin/entry", "serve", "--port", "8080");
            var config = recipe.config();
            assertThat(config.from()).hasValue("upload");
            assertThat(config.env()).isEqualTo(Map.of("PATH", "/usr/local/bin:/usr/bin:/bin", "GREETING", "hello=world"));
            assertThat(config.cmd()).hasValue(List.of("/bin/entry", "serve", "--port", "8080"));
            assertThat(config.workdir()).hasValue("/srv/app");
            assertThat(config.tenant()).isEqualTo(Optional.empty());
        }

        assertThat(template.resolve("etc/os-release")).hasContent("ID=test");
        assertThat(template.resolve("tmp-file")).doesNotExist();
        assertThat(Files.getAttribute(template.resolve("home/app/.profile"), "unix:uid")).isEqualTo(101000);
        assertThat(Files.getAttribute(template.resolve("etc/os-release"), "unix:uid")).isEqualTo(100000);
        assertThat((int) Files.getAttribute(template.resolve("usr/bin/tool"), "unix:mode") & 07777).isEqualTo(04755);
        assertThat(progress).first().asString().startsWith("applying layer 1/2 ");
        try (var left = Files.list(work)) {
            assertThat(left.map(p -> p.getFileName().toString())).as("the spool went with the image").noneMatch(n -> n.startsWith("stasis-image-"));
        }
    }
}
