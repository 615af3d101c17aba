package providers

import (
	"bytes"
	"testing"

	"github.com/aws/smithy-go/logging"
)

// What the AWS SDK logs while it finds credentials is printed as agentc's
// lines are, with the person's secrets redacted.
func TestSDKLog(t *testing.T) {
	var b bytes.Buffer
	t.Setenv("AWS_SECRET_ACCESS_KEY", "wJalrXUtnFEMI-sdk-log-secret")
	log := sdkLog(&b)
	log.Logf(logging.Warn, "falling back to IMDSv1: %s", "signed with wJalrXUtnFEMI-sdk-log-secret")
	log.Logf(logging.Debug, "retrying")
	sdkLog(nil).Logf(logging.Warn, "nowhere")
	want := "agentc: AWS SDK: warning: falling back to IMDSv1: signed with [redacted]\nagentc: AWS SDK: debug: retrying\n"
	if b.String() != want {
		t.Errorf("printed %q, want %q", b.String(), want)
	}
}
