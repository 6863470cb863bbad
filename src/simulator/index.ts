export { NO_FAULTS } from './faults.js';
export { DEFAULT_CREDENTIALS } from './options.js';
export { startSimulator } from './server.js';
export type {
  FaultKind,
  Faults,
  FieldChange,
  GrantType,
  ListingArrival,
  Move,
  MovingFault,
  Mutation,
  MutationTruth,
  SimCredentials,
  SimItem,
  SimStats,
  Simulator,
  SimulatorOptions,
} from './types.js';
