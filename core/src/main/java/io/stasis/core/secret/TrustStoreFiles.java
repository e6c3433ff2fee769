package io.stasis.core.secret;

import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import io.stasis.core.files.SandboxPath;
import io.stasis.core.spi.SandboxFiles;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.OptionalInt;

/**
 * Makes a sandbox trust its interception CA: the certificate as
 * {@value #ANCHOR} (where Debian's {@code update-ca-certificates} looks) and as a marked block in
 * the bundle {@value #BUNDLE} that OpenSSL, curl, Python and Go read by default (the bundle is
 * created holding only it where the template has none). Idempotent: an earlier Stasis block (a
 * parent's, or an older CA's) is replaced, never duplicated. All access goes through
 * {@link SandboxFiles}, confined to the root: the sandbox's symlinks cannot lead the write out.
 */
final class TrustStoreFiles {
    static final String ANCHOR = "/usr/local/share/ca-certificates/stasis-egress.crt";
    static final String BUNDLE = "/etc/ssl/certs/ca-certificates.crt";
    static final String BEGIN = "# BEGIN Stasis egress CA (added by the host; its key never enters the sandbox)\n";
    static final String END = "# END Stasis egress CA\n";
    private static final long MAX_BUNDLE = 16L << 20;

    private TrustStoreFiles() {
    }

    static void install(SandboxFiles files, Path root, String certificatePem) {
        String pem = certificatePem.endsWith("\n") ? certificatePem : certificatePem + "\n";
        writeIfChanged(files, root, ANCHOR, read(files, root, ANCHOR), pem);
        String bundle = read(files, root, BUNDLE);
        writeIfChanged(files, root, BUNDLE, bundle, withBlock(bundle, pem));
    }

    /** {@code bundle} with its Stasis block (if any) replaced by one holding {@code pem}, at the end. */
    static String withBlock(String bundle, String pem) {
        String rest = bundle;
        int begin = rest.indexOf(BEGIN);
        if (begin >= 0) {
            int end = rest.indexOf(END, begin);
            rest = end < 0 ? rest.substring(0, begin) : rest.substring(0, begin) + rest.substring(end + END.length());
        }
        if (!rest.isEmpty() && !rest.endsWith("\n")) rest += "\n";
        return rest + BEGIN + pem + END;
    }

    private static String read(SandboxFiles files, Path root, String path) {
        try (var content = files.read(root, new SandboxPath(path))) {
            if (content.size() > MAX_BUNDLE) throw new StasisException(ErrorCode.INVALID_STATE, path + " in the sandbox is larger than 16 MiB");
            return new String(content.stream().readAllBytes(), StandardCharsets.UTF_8);
        } catch (StasisException e) {
            if (e.code() == ErrorCode.FILE_NOT_FOUND) return "";
            throw e;
        } catch (IOException e) {
            throw new UncheckedIOException("reading " + path + " in the sandbox root", e);
        }
    }

    private static void writeIfChanged(SandboxFiles files, Path root, String path, String old, String content) {
        if (old.equals(content)) return;
        byte[] bytes = content.getBytes(StandardCharsets.UTF_8);
        files.write(root, new SandboxPath(path), new ByteArrayInputStream(bytes), OptionalInt.of(0644), MAX_BUNDLE);
    }
}
