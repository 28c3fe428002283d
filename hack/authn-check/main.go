// Command authn-check validates AuthenticationConfiguration documents with kube-apiserver's own code (as it
// does on reload) and evaluates jwt[0]'s claim mappings against given claims, the way its JWT authenticator
// builds the claims value. For the engine's tests: what the engine writes must be accepted, and map names as
// intended. Input: one JSON object per line {"config": <AuthenticationConfiguration>, "claims": {...}};
// output: one JSON object per line {"error"} or {"username"|"usernameError", "groups"|"groupsError"}.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apiserver/pkg/apis/apiserver"
	"k8s.io/apiserver/pkg/apis/apiserver/install"
	"k8s.io/apiserver/pkg/apis/apiserver/validation"
	authenticationcel "k8s.io/apiserver/pkg/authentication/cel"
	"k8s.io/apiserver/pkg/cel/lazy"
)

type input struct {
	Config json.RawMessage            `json:"config"`
	Claims map[string]json.RawMessage `json:"claims"`
}

func main() {
	scheme := runtime.NewScheme()
	install.Install(scheme)
	codecs := serializer.NewCodecFactory(scheme, serializer.EnableStrict)
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<24)
	for in.Scan() {
		var line input
		if err := json.Unmarshal(in.Bytes(), &line); err != nil {
			fmt.Println(`{"error":"bad input"}`)
			continue
		}
		out := map[string]any{}
		obj, _, err := codecs.UniversalDecoder().Decode(line.Config, nil, nil)
		if err != nil {
			out["error"] = "decode: " + err.Error()
			print(out)
			continue
		}
		config := obj.(*apiserver.AuthenticationConfiguration)
		if errs := validation.ValidateAuthenticationConfiguration(authenticationcel.NewDefaultCompiler(), config, nil); len(errs) > 0 {
			out["error"] = strings.ReplaceAll(errs.ToAggregate().Error(), "\n", " ")
			print(out)
			continue
		}
		if line.Claims != nil && len(config.JWT) > 0 {
			mapper, _ := validation.CompileAndValidateJWTAuthenticator(authenticationcel.NewDefaultCompiler(), config.JWT[0], nil)
			claims := lazy.NewMapValue(types.NewObjectType("kubernetes.claims"))
			for name, raw := range line.Claims {
				raw := raw
				claims.Append(name, func(_ *lazy.MapValue) ref.Val {
					var value any
					_ = json.Unmarshal(raw, &value)
					return types.DefaultTypeAdapter.NativeToValue(value)
				})
			}
			if mapper.Username != nil {
				r, err := mapper.Username.EvalClaimMapping(context.Background(), claims)
				if err != nil {
					out["usernameError"] = err.Error()
				} else {
					out["username"] = r.EvalResult.Value()
				}
			}
			if mapper.Groups != nil {
				r, err := mapper.Groups.EvalClaimMapping(context.Background(), claims)
				if err != nil {
					out["groupsError"] = err.Error()
				} else {
					out["groups"] = r.EvalResult.Value()
				}
			}
		}
		print(out)
	}
}

func print(v map[string]any) {
	b, _ := json.Marshal(v)
	fmt.Println(string(b))
}
