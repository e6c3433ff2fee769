package io.stasis.sdk;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.Test;

class ApiErrorsTest {
    private static StasisApiException map(int status, String body) {
        return ApiErrors.fromResponse(status, body.getBytes(StandardCharsets.UTF_8), "req_1");
    }

    private static String error(String code) {
        return "{\"error\": {\"code\": \"" + code + "\", \"message\": \"m\", \"details\": {}}}";
    }

    @ParameterizedTest
    @CsvSource({
            "400, malformed_request, InvalidRequestException",
            "401, unauthenticated, UnauthenticatedException",
            "403, forbidden, ForbiddenException",
            "404, not_found, NotFoundException",
            "404, sandbox_not_found, NotFoundException",
            "404, file_not_found, NotFoundException",
            "404, checkpoint_not_found, NotFoundException",
            "404, process_not_found, NotFoundException",
            "409, invalid_state, ConflictException",
            "409, checkpoint_unsupported, ConflictException",
            "409, name_taken, ConflictException",
            "409, template_in_use, ConflictException",
            "409, file_exists, ConflictException",
            "409, directory_not_empty, ConflictException",
            "413, payload_too_large, PayloadTooLargeException",
            "422, invalid_request, InvalidRequestException",
            "422, template_not_found, InvalidRequestException",
            "422, not_a_directory, InvalidRequestException",
            "422, is_a_directory, InvalidRequestException",
            "429, quota_exceeded, QuotaExceededException",
            "503, host_busy, ServiceUnavailableException",
            "503, template_unavailable, ServiceUnavailableException",
            "500, runtime_failed, ServerErrorException",
            "500, internal, ServerErrorException",
    })
    void mapsEveryDocumentedCode(int status, String code, String type) {
        StasisApiException e = map(status, error(code));
        assertThat(e.getClass().getSimpleName()).isEqualTo(type);
        assertThat(e.status()).isEqualTo(status);
        assertThat(e.code()).isEqualTo(code);
        assertThat(e.errorMessage()).isEqualTo("m");
        assertThat(e.requestId()).isEqualTo("req_1");
        assertThat(ApiErrors.documentedStatus(code)).as("the status of an error that comes inside a stream").isEqualTo(status);
    }

    @ParameterizedTest
    @CsvSource({
            "401, UnauthenticatedException", "403, ForbiddenException", "404, NotFoundException",
            "409, ConflictException", "400, InvalidRequestException", "422, InvalidRequestException",
            "413, PayloadTooLargeException", "429, QuotaExceededException", "503, ServiceUnavailableException",
            "500, ServerErrorException", "502, ServerErrorException", "418, StasisApiException",
    })
    void anUnknownCodeFallsBackToTheStatus(int status, String type) {
        StasisApiException e = map(status, error("brand_new_code"));
        assertThat(e.getClass().getSimpleName()).isEqualTo(type);
        assertThat(e.code()).isEqualTo("brand_new_code");
    }

    @Test
    void keepsDetailsAndDescribesItself() {
        StasisApiException e = map(404, "{\"error\": {\"code\": \"sandbox_not_found\", "
                + "\"message\": \"no sandbox with id or name 'x'\", \"details\": {\"sandbox\": \"x\", \"n\": 2}},"
                + " \"extra\": true}");
        assertThat(e).isInstanceOf(NotFoundException.class);
        assertThat(e.details()).isEqualTo(Map.of("sandbox", "x", "n", 2));
        assertThat(e.getMessage())
                .isEqualTo("sandbox_not_found: no sandbox with id or name 'x' (HTTP 404, request req_1)");
    }

    @Test
    void aBodyThatIsNotAnErrorObjectStillMapsByStatus() {
        StasisApiException html = map(502, "<html>bad gateway</html>");
        assertThat(html).isInstanceOf(ServerErrorException.class);
        assertThat(html.code()).isEqualTo("http_502");
        assertThat(html.errorMessage()).isEqualTo("<html>bad gateway</html>");

        StasisApiException empty = map(401, "");
        assertThat(empty).isInstanceOf(UnauthenticatedException.class);
        assertThat(empty.errorMessage()).isEqualTo("HTTP 401 without an error body");
        assertThat(empty.details()).isEmpty();

        assertThat(map(404, "{\"message\": \"no error key\"}")).isInstanceOf(NotFoundException.class);
    }
}
