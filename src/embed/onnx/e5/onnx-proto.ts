/**
 * The part of ONNX's protobuf schema (onnx/onnx.proto, IR version 8) that a converted model needs,
 * encoded with protobufjs, and a small builder for graphs. Field numbers are ONNX's; only fields
 * we write are declared. protobufjs writes fields in declaration order and we never use maps, so
 * the same graph always encodes to the same bytes.
 */
import protobuf from 'protobufjs/light.js';

const schema = {
  nested: {
    onnx: {
      nested: {
        ModelProto: {
          fields: {
            irVersion: { type: 'int64', id: 1 },
            producerName: { type: 'string', id: 2 },
            producerVersion: { type: 'string', id: 3 },
            docString: { type: 'string', id: 6 },
            graph: { type: 'GraphProto', id: 7 },
            opsetImport: { rule: 'repeated', type: 'OperatorSetIdProto', id: 8 },
          },
        },
        OperatorSetIdProto: { fields: { domain: { type: 'string', id: 1 }, version: { type: 'int64', id: 2 } } },
        GraphProto: {
          fields: {
            node: { rule: 'repeated', type: 'NodeProto', id: 1 },
            name: { type: 'string', id: 2 },
            initializer: { rule: 'repeated', type: 'TensorProto', id: 5 },
            input: { rule: 'repeated', type: 'ValueInfoProto', id: 11 },
            output: { rule: 'repeated', type: 'ValueInfoProto', id: 12 },
          },
        },
        NodeProto: {
          fields: {
            input: { rule: 'repeated', type: 'string', id: 1 },
            output: { rule: 'repeated', type: 'string', id: 2 },
            name: { type: 'string', id: 3 },
            opType: { type: 'string', id: 4 },
            attribute: { rule: 'repeated', type: 'AttributeProto', id: 5 },
            domain: { type: 'string', id: 7 },
          },
        },
        AttributeProto: {
          fields: {
            name: { type: 'string', id: 1 },
            f: { type: 'float', id: 2 },
            i: { type: 'int64', id: 3 },
            t: { type: 'TensorProto', id: 5 },
            ints: { rule: 'repeated', type: 'int64', id: 8 },
            type: { type: 'int32', id: 20 },
          },
        },
        TensorProto: {
          fields: {
            dims: { rule: 'repeated', type: 'int64', id: 1 },
            dataType: { type: 'int32', id: 2 },
            name: { type: 'string', id: 8 },
            rawData: { type: 'bytes', id: 9 },
          },
        },
        ValueInfoProto: { fields: { name: { type: 'string', id: 1 }, type: { type: 'TypeProto', id: 2 } } },
        TypeProto: {
          fields: { tensorType: { type: 'TensorTypeProto', id: 1 } },
        },
        TensorTypeProto: {
          fields: { elemType: { type: 'int32', id: 1 }, shape: { type: 'TensorShapeProto', id: 2 } },
        },
        TensorShapeProto: { fields: { dim: { rule: 'repeated', type: 'Dimension', id: 1 } } },
        Dimension: {
          oneofs: { value: { oneof: ['dimValue', 'dimParam'] } },
          fields: { dimValue: { type: 'int64', id: 1 }, dimParam: { type: 'string', id: 2 } },
        },
      },
    },
  },
};

/** ONNX TensorProto.DataType codes. */
export const DT = { FLOAT: 1, UINT8: 2, INT32: 6, INT64: 7 } as const;
type DataType = (typeof DT)[keyof typeof DT];

/** AttributeProto.AttributeType codes. */
const AT = { FLOAT: 1, INT: 2, TENSOR: 4, INTS: 7 } as const;

export type AttributeValue = number | { readonly float: number } | readonly number[];

interface Tensor {
  readonly name: string;
  readonly dims: readonly number[];
  readonly dataType: DataType;
  readonly rawData: Uint8Array;
}

interface Node {
  readonly opType: string;
  readonly domain: string;
  readonly name: string;
  readonly input: readonly string[];
  readonly output: readonly string[];
  readonly attribute: readonly object[];
}

const bytesOf = (values: Float32Array | BigInt64Array | Int32Array | Uint8Array): Uint8Array =>
  new Uint8Array(values.buffer, values.byteOffset, values.byteLength);

function attribute(name: string, value: AttributeValue): object {
  if (typeof value === 'number') return { name, type: AT.INT, i: value };
  if ('float' in value) return { name, type: AT.FLOAT, f: value.float };
  return { name, type: AT.INTS, ints: [...value] };
}

/** A graph under construction: initializers, nodes in order, and unique names for intermediates. */
export class GraphBuilder {
  private readonly nodes: Node[] = [];
  private readonly initializers: Tensor[] = [];
  private readonly names = new Set<string>();
  private count = 0;

  /** A fresh name for an intermediate value, readable in a model viewer. */
  fresh(hint: string): string {
    this.count++;
    return `${hint}_${this.count}`;
  }

  private add(tensor: Tensor): string {
    if (this.names.has(tensor.name)) throw new Error(`initializer ${tensor.name} is defined twice`);
    this.names.add(tensor.name);
    this.initializers.push(tensor);
    return tensor.name;
  }

  floats(name: string, dims: readonly number[], values: Float32Array): string {
    return this.add({ name, dims, dataType: DT.FLOAT, rawData: bytesOf(values) });
  }

  bytes(name: string, dims: readonly number[], values: Uint8Array): string {
    return this.add({ name, dims, dataType: DT.UINT8, rawData: values });
  }

  int64s(name: string, dims: readonly number[], values: readonly number[]): string {
    return this.add({ name, dims, dataType: DT.INT64, rawData: bytesOf(BigInt64Array.from(values.map(BigInt))) });
  }

  /** Adds a node and returns its (first) output name. */
  node(
    opType: string,
    input: readonly string[],
    attributes: Readonly<Record<string, AttributeValue>> = {},
    options: { domain?: string; outputs?: number; name?: string } = {},
  ): string {
    const name = options.name ?? this.fresh(opType);
    const output = Array.from({ length: options.outputs ?? 1 }, (_, i) => (i === 0 ? name : `${name}_out${i}`));
    this.nodes.push({
      opType,
      domain: options.domain ?? '',
      name: `${name}_node`,
      input,
      output,
      attribute: Object.entries(attributes).map(([k, v]) => attribute(k, v)),
    });
    return name;
  }

  /**
   * Encodes the graph as an ONNX ModelProto.
   * @example encode({ name: 'e5', inputs: [...], outputs: [...], opsets: { '': 17 } })
   */
  encode(model: {
    readonly name: string;
    readonly docString: string;
    readonly opsets: Readonly<Record<string, number>>;
    readonly inputs: readonly ValueInfo[];
    readonly outputs: readonly ValueInfo[];
  }): Uint8Array {
    const root = protobuf.Root.fromJSON(schema);
    const ModelProto = root.lookupType('onnx.ModelProto');
    const message = {
      irVersion: 8,
      producerName: 'limbic',
      producerVersion: '1',
      docString: model.docString,
      graph: {
        node: this.nodes,
        name: model.name,
        initializer: this.initializers,
        input: model.inputs.map(valueInfo),
        output: model.outputs.map(valueInfo),
      },
      opsetImport: Object.entries(model.opsets).map(([domain, version]) => ({ domain, version })),
    };
    const problem = ModelProto.verify(message);
    if (problem !== null) throw new Error(`ONNX model does not fit the schema: ${problem}`);
    return ModelProto.encode(message).finish();
  }
}

export interface ValueInfo {
  readonly name: string;
  readonly elemType: DataType;
  /** A number for a fixed size, a string for a named dynamic one. */
  readonly shape: readonly (number | string)[];
}

function valueInfo(v: ValueInfo): object {
  return {
    name: v.name,
    type: {
      tensorType: {
        elemType: v.elemType,
        shape: { dim: v.shape.map((d) => (typeof d === 'number' ? { dimValue: d } : { dimParam: d })) },
      },
    },
  };
}
