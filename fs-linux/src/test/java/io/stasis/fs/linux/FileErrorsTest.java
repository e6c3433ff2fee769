package io.stasis.fs.linux;

import static org.assertj.core.api.Assertions.assertThat;

import io.stasis.core.error.ErrorCode;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.Test;

class FileErrorsTest {

    @ParameterizedTest
    @CsvSource({
            "2, FILE_NOT_FOUND", "17, FILE_EXISTS", "20, NOT_A_DIRECTORY", "21, IS_A_DIRECTORY",
            "39, DIRECTORY_NOT_EMPTY", "18, INVALID_REQUEST", "40, INVALID_REQUEST", "36, INVALID_REQUEST",
            "22, INVALID_REQUEST", "16, INVALID_REQUEST", "28, QUOTA_EXCEEDED", "122, QUOTA_EXCEEDED",
            "1, INVALID_REQUEST", "30, INVALID_REQUEST", "5, INTERNAL", "200, INTERNAL"})
    void mapsErrnoToTheApiCodeAndNamesTheSandboxPath(int errno, ErrorCode expected) {
        var e = FileErrors.map(new LinuxException(errno, "openat2", "/root/a"), "/root/a");

        assertThat(e.code()).isEqualTo(expected);
        assertThat(e.getMessage()).contains("/root/a");
        assertThat(e.details()).containsEntry("path", "/root/a").containsEntry("errno", Errno.name(errno));
    }

    @Test
    void aProblemMoreSpecificThanTheErrnoIsShown() {
        var e = FileErrors.map(new LinuxException(Errno.EINVAL, "open", "/dev/x", "not a regular file"), "/dev/x");

        assertThat(e.code()).isEqualTo(ErrorCode.INVALID_REQUEST);
        assertThat(e.getMessage()).isEqualTo("not a regular file: /dev/x");
    }

    @Test
    void crossDeviceMovesSayWhy() {
        var e = FileErrors.map(new LinuxException(Errno.EXDEV, "renameat2", "a -> b"), "/a -> /b");

        assertThat(e.getMessage()).contains("across filesystems").contains("/a -> /b");
    }

    @Test
    void linuxExceptionNamesCallPathAndErrno() {
        var e = new LinuxException(Errno.ENOENT, "openat2", "/x/y");

        assertThat(e.getMessage()).isEqualTo("openat2(/x/y): ENOENT");
        assertThat(e.errnoName()).isEqualTo("ENOENT");
        assertThat(e.is(Errno.ENOENT)).isTrue();
        assertThat(Errno.name(4242)).isEqualTo("errno 4242");
    }
}
