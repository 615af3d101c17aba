package openai

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/openai/openai-go/v3/azure"
	"github.com/openai/openai-go/v3/option"
)

// azureOptions are the SDK's options for an Azure OpenAI resource: its
// endpoint and API version (the deployment goes in the path, the version
// in the query) and one credential.
func azureOptions(a *Azure) ([]option.RequestOption, error) {
	u, err := url.Parse(a.Endpoint)
	switch {
	case a.Endpoint == "":
		return nil, errors.New("openai: azure: no endpoint")
	case err != nil:
		return nil, errors.New("openai: azure: the endpoint is not a URL of a resource (https://RESOURCE.openai.azure.com)")
	case u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "":
		return nil, fmt.Errorf("openai: azure: endpoint %s is not a URL of a resource (https://RESOURCE.openai.azure.com)", u.Redacted())
	case u.Scheme != "https" && !(u.Scheme == "http" && loopback(u.Hostname())):
		return nil, fmt.Errorf("openai: azure: endpoint %s: a credential goes only over https (plain http only to this machine)", u.Redacted())
	case a.APIVersion == "":
		return nil, errors.New("openai: azure: no API version (2024-10-21, say)")
	case (a.APIKey == "") == (a.Token == ""):
		return nil, errors.New("openai: azure: give exactly one credential: an API key or a Microsoft Entra ID token")
	}
	opts := []option.RequestOption{azure.WithEndpoint(a.Endpoint, a.APIVersion)}
	if a.APIKey != "" {
		opts = append(opts, azure.WithAPIKey(a.APIKey))
	} else {
		opts = append(opts, azure.WithTokenCredential(staticToken(a.Token)))
	}
	if u.Scheme == "http" {
		opts = append(opts, azure.WithUnsafeAllowHTTP())
	}
	return opts, nil
}

// staticToken is an Entra ID access token the person running obtained
// (az account get-access-token): agentc does not refresh it, and a run
// that outlives it fails with the service's 401.
type staticToken string

func (t staticToken) GetToken(context.Context, policy.TokenRequestOptions) (azcore.AccessToken, error) {
	// The service, not the token's claims, says when it has expired.
	return azcore.AccessToken{Token: string(t), ExpiresOn: time.Now().Add(time.Hour)}, nil
}

func loopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
