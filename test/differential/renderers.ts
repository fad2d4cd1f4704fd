// Each renderer family of the rendered corpus (test/differential/rendered/*.yaml): its way to read,
// render and check a scenario. The differential suite (rendered.test.ts) and the editor/command-line
// agreement (test/protocol/editor-and-cli-agree-rendered.test.ts) read the corpus through it; a new
// family adds its line.
import { helmFamily } from './render-helm';
import { kustomizeFamily } from './render-kustomize';
import type { RendererFamily } from './rendered-scenario';

export const renderers: Record<string, RendererFamily> = {
  kustomize: kustomizeFamily,
  helm: helmFamily,
};
