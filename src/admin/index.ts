/**
 * @module admin
 * The front door of src/admin/: what other areas, the operations and the faces use of it.
 */
export { evaluationRow, recordEvaluations } from './audit.js';
export type {
  CompiledRule,
  EffectivePolicy,
  EnforcedGrant,
  Enforcement,
  EvaluationService,
  EvaluationInput,
  EvaluationRow,
  GrantEnforcement,
  ListService,
  ListSet,
  PolicyService,
  PolicyUpkeep,
  RuleOutcome,
  RuleService,
  UpkeepResult,
  WorkspaceService,
} from './contracts.js';
export { createEnforcement } from './enforcement.js';
export { createEvaluationService } from './evaluation-service.js';
export { createListService } from './list-service.js';
export { createPolicyService } from './policy-service.js';
export { createPolicyUpkeep } from './policy-upkeep.js';
export { appliedActionsOf, evaluateRules, evaluationInputOf } from './rule-engine.js';
export { createRuleService } from './rule-service.js';
export { createWorkspaceService } from './workspace-service.js';
