package io.stasis.cli;

import io.stasis.sdk.TemplateBuildException;
import io.stasis.sdk.TemplateInfo;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

/** {@code stasis template import NAME (ARCHIVE | oci://REGISTRY/REPO:TAG)}: a container image as a template. */
@Command(name = "import", mixinStandardHelpOptions = true,
        description = {"Import a container image as a template: an image archive (an OCI image layout, or what `docker save` "
                + "writes; plain, gzip or zstd), uploaded and checked at once, or an image pulled from a registry "
                + "(oci://REGISTRY/REPO[:TAG][@sha256:...]).",
                "Waits with a progress line on a terminal until the image is applied, then prints the template; exits 1 when "
                        + "the import failed, saying why. The image's Env, WorkingDir, User and command become the template's."},
        footerHeading = "%nExamples:%n",
        footer = {"  docker save python:3.12-slim | gzip > python.tar.gz   # on a machine with docker",
                "  stasis template import python python.tar.gz",
                "  stasis template import app oci://registry.internal:5000/team/app:1.4"})
final class TemplateImportCommand implements Callable<Integer> {
    private static final String OCI = "oci://";

    @ParentCommand
    TemplateCommand parent;

    @Parameters(index = "0", paramLabel = "NAME", description = "The template's name: 1-63 of a-z 0-9 . _ -, starting with a letter or digit.")
    String name;

    @Parameters(index = "1", paramLabel = "IMAGE", description = "An image archive file, or oci://REGISTRY/REPO[:TAG][@sha256:...].")
    String image;

    @Option(names = {"-q", "--quiet"}, description = "No progress line.")
    boolean quiet;

    @Override
    public Integer call() {
        var root = parent.root;
        var templates = root.client().templates();
        if (image.startsWith(OCI)) {
            templates.importImage(name, image);
        } else {
            root.io().requireLocal("template import reads this process's files");
            Path archive = root.io().local(Path.of(image));
            if (!Files.isRegularFile(archive)) throw new UsageException("no such image archive: " + image);
            try (var progress = quiet ? null : Progress.ticking(root, "sending " + image)) {
                templates.importArchive(name, archive);
            }
        }
        long started = System.nanoTime();
        TemplateInfo imported;
        try (var progress = Progress.start(root)) {
            imported = templates.awaitBuild(name, null, t -> {
                if (!quiet) progress.show("importing " + t.name() + "... " + Duration.ofNanos(System.nanoTime() - started).toSeconds() + "s");
            });
        } catch (TemplateBuildException failed) {
            if (root.json()) root.printJson(failed.template());
            root.io().out().flush();
            root.io().err().println("error: " + failed.getMessage());
            return ExitCodes.ERROR;
        }
        return root.print(imported, () -> TemplateBuildCommand.summary(imported) + "\n");
    }
}
