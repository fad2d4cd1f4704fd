// What the editor's document features (diagnostics, hover, code actions, code lenses, ownership
// hints) are answered from, whatever kind of file the document is. Each kind of input is one
// DocumentSource (manifest-source.ts: a file of Kubernetes objects; rendered.ts: a chart's file,
// a kustomization or a file it uses); the service picks the one that claims the document and asks
// it. The handlers call the service only, so a new kind of input is one new source, listed in
// server.ts, and no handler changes.
import type { CodeAction, CodeActionParams, CodeLens, Hover, Position } from 'vscode-languageserver/node';
import type { TextDocument } from 'vscode-languageserver-textdocument';
import { type Finding, type LineSpan, type OwnershipHint } from '../core/findings';
import type { Settings } from '../protocol';
import type { ClassifiedFile } from './source-files';
import type { Workspace } from './workspace';

/** One kind of document and everything the editor is told on it. Plain data out. */
export interface DocumentSource {
  /** Whether the file is of this source's kind; the first source in the list that claims it answers. */
  claims(file: ClassifiedFile): boolean;
  /** What the diagnostics say, ranges on this document; `settings`: the document's, as just asked of the editor. */
  findings(document: TextDocument, settings: Settings): Promise<readonly Finding[]>;
  /** The hover at a position; null for none. */
  hover(document: TextDocument, position: Position): Promise<Hover | null>;
  /** The fixes for the diagnostics the client names (their findings ride in `data`). */
  codeActions(document: TextDocument, params: CodeActionParams): Promise<CodeAction[]>;
  codeLenses(document: TextDocument): Promise<CodeLens[]>;
  /** Who else owns each line's field on the live object, for the lines asked about. */
  ownershipHints(document: TextDocument, lines: LineSpan, now: number): Promise<readonly OwnershipHint[]>;
}

export class DocumentService {
  constructor(
    private readonly workspace: Workspace,
    /** In order: the first that claims a document answers for it. */
    private readonly sources: readonly DocumentSource[],
  ) {}

  async findings(document: TextDocument, settings: Settings): Promise<readonly Finding[]> {
    const source = await this.sourceOf(document);
    return source ? source.findings(document, settings) : [];
  }

  async hover(document: TextDocument, position: Position): Promise<Hover | null> {
    const source = await this.sourceOf(document);
    return source ? source.hover(document, position) : null;
  }

  async codeActions(document: TextDocument, params: CodeActionParams): Promise<CodeAction[]> {
    const source = await this.sourceOf(document);
    return source ? source.codeActions(document, params) : [];
  }

  async codeLenses(document: TextDocument): Promise<CodeLens[]> {
    const source = await this.sourceOf(document);
    return source ? source.codeLenses(document) : [];
  }

  async ownershipHints(document: TextDocument, lines: LineSpan, now: number): Promise<readonly OwnershipHint[]> {
    const source = await this.sourceOf(document);
    return source ? source.ownershipHints(document, lines, now) : [];
  }

  /** The source for what the document is now (undefined once it is closed). */
  private async sourceOf(document: TextDocument): Promise<DocumentSource | undefined> {
    const file = await this.workspace.classify(document.uri);
    return file && this.sources.find((source) => source.claims(file));
  }
}
