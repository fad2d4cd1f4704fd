// helm-controller's drift correction (spec.driftDetection.mode), for the tests' truth about what a
// Flux HelmRelease takes back. helm-controller itself is not on the Go module proxy; what it runs for
// drift is (helm-controller internal/action/diff.go, Diff and ApplyDiff): the release's objects, with
// Helm's release labels and annotations set, compared with the cluster by fluxcd/pkg/ssa's jsondiff
// (a server-side dry-run apply as the field owner `helm-controller`, the
// `helm.toolkit.fluxcd.io/driftDetection: disabled` exclusion, rationalized, graceful); then, when the
// mode is `enabled`, each missing object created and each drifted one patched with the JSON patch the
// diff produced, as `helm-controller`. In `warn` mode the diff is only reported. The glue below
// follows those two functions; the comparison is jsondiff's own code. Mode `install` creates the
// release's objects as Helm's install does for helm-controller (a create per object, field manager
// `helm-controller`), before any drift detection.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/fluxcd/pkg/ssa/jsondiff"
	"github.com/fluxcd/pkg/ssa/normalize"
	ssautil "github.com/fluxcd/pkg/ssa/utils"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// helm-controller's field owner and its drift-detection exclusion (api/v2: DriftDetectionMetadataKey).
const (
	helmControllerName = "helm-controller"
	driftDetectionKey  = "helm.toolkit.fluxcd.io/driftDetection"
)

func runHelmDrift(kubeconfig, release, releaseNamespace, mode string) error {
	if mode != "enabled" && mode != "warn" && mode != "install" {
		return fmt.Errorf("--helm-drift %q: install, enabled or warn", mode)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	dryRun, err := client.New(cfg, client.Options{DryRun: ptr.To(true)})
	if err != nil {
		return err
	}
	objects, err := ssautil.ReadObjects(os.Stdin)
	if err != nil {
		return err
	}
	if err := normalize.UnstructuredListWithScheme(objects, dryRun.Scheme()); err != nil {
		return err
	}
	for _, obj := range objects {
		// What Helm sets on every object of a release (helm pkg/action), as Diff does.
		labels := obj.GetLabels()
		if labels == nil {
			labels = map[string]string{}
		}
		labels["app.kubernetes.io/managed-by"] = "Helm"
		obj.SetLabels(labels)
		annotations := obj.GetAnnotations()
		if annotations == nil {
			annotations = map[string]string{}
		}
		annotations["meta.helm.sh/release-name"] = release
		annotations["meta.helm.sh/release-namespace"] = releaseNamespace
		obj.SetAnnotations(annotations)
		if obj.GetNamespace() == "" {
			obj.SetNamespace(releaseNamespace)
		}
	}

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if mode == "install" {
		writer, err := client.New(cfg, client.Options{})
		if err != nil {
			return err
		}
		for _, obj := range objects {
			if err := writer.Create(ctx, obj, client.FieldOwner(helmControllerName)); err != nil {
				return fmt.Errorf("install %s/%s: %w", obj.GetKind(), obj.GetName(), err)
			}
		}
		return json.NewEncoder(os.Stdout).Encode(struct {
			Diffs []any `json:"diffs"`
		}{Diffs: []any{}})
	}
	set, diffErr := jsondiff.UnstructuredList(ctx, dryRun, objects,
		jsondiff.FieldOwner(helmControllerName),
		jsondiff.ExclusionSelector{driftDetectionKey: "disabled"},
		jsondiff.Rationalize(true),
		jsondiff.Graceful(true),
	)
	type entry struct {
		Subject string          `json:"subject"`
		Type    string          `json:"type"`
		Patch   json.RawMessage `json:"patch,omitempty"`
		Error   string          `json:"error,omitempty"`
	}
	out := struct {
		Diffs []entry `json:"diffs"`
		Error string  `json:"error,omitempty"`
	}{Diffs: []entry{}}
	if diffErr != nil {
		out.Error = diffErr.Error()
	}
	var writer client.Client
	if mode == "enabled" {
		if writer, err = client.New(cfg, client.Options{}); err != nil {
			return err
		}
	}
	for _, d := range set {
		subject := fmt.Sprintf("%s/%s/%s", d.GroupVersionKind().Kind, d.GetNamespace(), d.GetName())
		e := entry{Subject: subject, Type: string(d.Type)}
		if d.Patch != nil {
			raw, err := json.Marshal(d.Patch)
			if err != nil {
				return err
			}
			e.Patch = raw
		}
		if writer != nil {
			obj := d.DesiredObject.DeepCopyObject().(client.Object)
			switch d.Type {
			case jsondiff.DiffTypeCreate:
				if err := writer.Create(ctx, obj, client.FieldOwner(helmControllerName)); err != nil {
					e.Error = err.Error()
				}
			case jsondiff.DiffTypeUpdate:
				patch := client.RawPatch(types.JSONPatchType, e.Patch)
				if err := writer.Patch(ctx, obj, patch, client.FieldOwner(helmControllerName)); err != nil {
					e.Error = err.Error()
				}
			}
		}
		out.Diffs = append(out.Diffs, e)
	}
	return json.NewEncoder(os.Stdout).Encode(out)
}
