/* The delegate's own graph for one partition: tensors with BHWC shapes and
 * nodes with plain parameters, lowered once from the TfLite structs so that
 * planning and kernel encoding never touch runtime data again. */
#ifndef TFLITE_GPU_GRAPH_H
#define TFLITE_GPU_GRAPH_H

#include <stddef.h>

#include "kernel_abi.h"

#define GD_MAX_NODE_INPUTS 16
#define GD_MAX_NODE_OUTPUTS 4

/* TFLite shapes are right-aligned into (B, H, W, C): rank 1 (C), rank 2
 * (W, C), rank 3 (H, W, C). Right alignment keeps TFLite's broadcasting
 * rules, and row-major element order is unchanged, so RESHAPE is a remap. */
enum { GD_B = 0, GD_H = 1, GD_W = 2, GD_C = 3 };

typedef struct GTensor {
  int shape[4];      /* B, H, W, C */
  int rank;          /* the TFLite rank (0-4) */
  int tflite_index;  /* -1 for tensors the delegate adds */
  int dtype;         /* TfLiteType of the TFLite tensor (0 for added ones). Inside a partition every value
                      * is a float (bool 0/1, int32 exact to 2^24); only the boundary converts. */
  float* data;       /* constants: row-major BHWC float32, owned; NULL for runtime tensors */
  int is_input;      /* partition input (fed from the runtime) */
  int is_output;     /* partition output (read back to the runtime) */
  int is_int32;      /* runtime int32 tensor (GATHER / ONE_HOT indices): a partition input kept
                        row-major in its staging buffer, never converted to PHWC4 */
  int first_use;     /* node position that writes it (-1: before the first node) */
  int last_use;      /* last node position that reads it */
  size_t bytes;      /* PHWC4 size in the storage type */
  size_t offset;     /* in the activation arena */
  /* Runtime int8/uint8 tensors (ENABLE_QUANT): the graph holds their float
   * view; the partition boundary converts with these affine params. */
  int qtype;         /* GD_QNONE, GD_QINT8 or GD_QUINT8 */
  float qscale;
  int qzero;
  int fp32;          /* float storage inside an FP16 partition (mixed_storage.c) */
  int write_back;    /* >= 0: the TFLite variable tensor this one is copied into after each invoke (the
                      * state of a sequence op, ops_sequence.c); -1 otherwise */
  int bhwc;          /* a float32 partition input kept row-major in its staging buffer, never converted to
                      * PHWC4: only conv2d_bhwc_gpu reads it (input_direct.c) */
  int bhwc_out;      /* stored by its conv as BHWC float32 into output bhwc_output's staging buffer, from
                      * element bhwc_offset on; never in the arena (output_direct.c) */
  int bhwc_output;
  size_t bhwc_offset;
  int out_part;      /* a part of an assembled output (Graph.parts): lives to the end, where it is converted */
  int in_arena;      /* planned in the activation arena, at `offset` (executor.c) */
} GTensor;

enum { GD_QNONE = 0, GD_QINT8 = 1, GD_QUINT8 = 2 };

/* What a node computes: its kind, a value the passes and selectors compare
 * and the encoder table (ops/op_kinds.c) maps to the encode function that
 * asks the selector (cl/target.h) for a kernel variant, packs weights and
 * binds the arguments. The kinds are data: nothing below ops/ needs an
 * encoder to make, match or rewrite a node. Listed by the file that
 * encodes them (ops/, or the pass that makes them in parentheses). */
typedef enum GOp {
  GOP_NONE = 0,
  GOP_NORM_STATS,                                                       /* fused_norm_stats.c */
  GOP_FC_HEADS,                                                         /* fused_fc_heads.c */
  GOP_FC_PAIR,                                                          /* fused_fc_pair.c */
  GOP_INT8_EXACT,                                                       /* int8_exact.c */
  GOP_STORAGE_CAST,                                                     /* fused_storage_cast.c */
  GOP_ARG_MINMAX,                                                       /* ops_argminmax.c */
  GOP_BATCH_MATMUL,                                                     /* ops_batch_matmul.c */
  GOP_CONV2D, GOP_DEPTHWISE, GOP_DW_CONV1X1, GOP_PW_DEPTHWISE,          /* ops_conv.c */
  GOP_CUMSUM,                                                           /* ops_cumsum.c */
  GOP_DEPTH_TO_SPACE, GOP_SPACE_TO_DEPTH,                               /* ops_depth_to_space.c */
  GOP_BINARY, GOP_UNARY,                                                /* ops_elementwise.c */
  GOP_FULLY_CONNECTED,                                                  /* ops_fully_connected.c */
  GOP_ONE_HOT,                                                          /* ops_gather.c */
  GOP_L2_NORM,                                                          /* ops_l2norm.c */
  GOP_LANDMARKS_TO_MATRIX, GOP_TRANSFORM_LANDMARKS,                     /* ops_landmarks.c */
  GOP_CONCAT, GOP_REMAP,                                                /* ops_layout.c */
  GOP_LRN,                                                              /* ops_lrn.c */
  GOP_LSTM_CELL,                                                        /* ops_lstm.c */
  GOP_POOL,                                                             /* ops_pool.c */
  GOP_MAX_POOL_ARGMAX, GOP_MAX_UNPOOL,                                  /* ops_pool_argmax.c */
  GOP_QUANTIZE,                                                         /* ops_quantize.c */
  GOP_REDUCE,                                                           /* ops_reduce.c */
  GOP_RESAMPLER,                                                        /* ops_resampler.c */
  GOP_RESIZE_BILINEAR, GOP_RESIZE_NEAREST,                              /* ops_resize.c */
  GOP_SEQUENCE,                                                         /* ops_sequence.c */
  GOP_SOFTMAX,                                                          /* ops_softmax.c */
  GOP_BATCH_TO_SPACE, GOP_SPACE_TO_BATCH,                               /* ops_space_batch.c */
  GOP_TRANSFORM_TENSOR,                                                 /* ops_transform_tensor.c */
  GOP_TRANSPOSE_CONV,                                                   /* ops_transpose_conv.c */
  GOP_NUM
} GOp;

/* Binary, unary, remap, border, reduce and epilogue codes, shared with
 * the kernels: opencl_kernels/kernel_abi.h. Epilogue steps are fused into
 * a producer's output (fuse_epilogue.c) and applied in order after its
 * activation, GD_MAX_EPILOGUE at most; one runtime operand (a residual or
 * an EPI_BINARY step's) per node. The kernels take two steps with at most
 * one of them using the alpha operand as they are, any other chain as an
 * EPI_CHAIN (ops_conv.c). */
#define GD_MAX_EPILOGUE 8
#define GD_STRINGIFY_(x) #x
#define GD_STRINGIFY(x) GD_STRINGIFY_(x) /* a number's digits, for messages */
typedef struct Epilogue {
  int op;
  int tensor; /* alpha (constant) or the residual (runtime) */
  int act;    /* activation after an ADD; EPI_UNARY: the op (UN_*) */
  float qscale; /* EPI_QDQ: the grid; EPI_UNARY: leaky relu's alpha */
  int qzero, qmin, qmax;
  /* EPI_ADD whose residual is read through a 2x2 stride-2 max pool or a
   * 2x bilinear upsampling of `tensor` (fuse_epilogue.c): the kernels' code,
   * EPI_ADD_MAX2 or EPI_ADD_UP2 with its bits; 0 otherwise. Only
   * CONV_2D nodes get it (common.cl conv_residual). */
  int via;
  /* EPI_AFFINE: `tensor` the constant multiplied by (-1: none), `shift`
   * the one added (-1: none) times shift_sign (-1: a SUB); add_first 1
   * where the addition came first ((v + b) * a). */
  int shift;
  float shift_sign;
  int add_first;
  /* EPI_BINARY: the BIN_* op of v and `tensor` (a constant per channel or
   * a scalar, or a runtime tensor of the output's shape or, with via
   * EPI_RES_CHANNEL, of one value per channel), then act; swap 1 where v is
   * the op's second operand. */
  int bin, swap;
} Epilogue;

/* Landmarks2TransformMatrix. v2: f = (target_rotation, scale_x, scale_y),
 * i = (output_w, output_h); v1: f = (landmarks_range, bbox_multiplier),
 * i = (input_w, input_h, output_w, output_h). */
typedef struct LandmarksMatrixParams {
  int version, left, right;
  int subset, num_subset; /* constant tensor of landmark indices (as floats) */
  float f[3];
  int i[4];
} LandmarksMatrixParams;

typedef struct GNode {
  GOp op;
  Epilogue epi[GD_MAX_EPILOGUE];
  int num_epi;
  int tflite_node;    /* for error messages */
  const char* name;   /* TFLite op name */
  int inputs[GD_MAX_NODE_INPUTS];
  int num_inputs;
  int outputs[GD_MAX_NODE_OUTPUTS];
  int num_outputs;
  int act;            /* fused TfLiteFusedActivation */
  int fp32;           /* runs on float storage inside an FP16 partition (mixed_storage.c) */
  union {
    struct {
      int kw, kh, sx, sy, dx, dy, pad_x, pad_y, multiplier;
      int weights, bias; /* constant tensors (TFLite layout); bias may be -1 */
      /* GOP_DW_CONV1X1: the fields above are the depthwise's; these are the
       * 1x1's constants (bias may be -1) and the depthwise's activation
       * (act and epi are the 1x1's). */
      int pw_weights, pw_bias, dw_act;
      /* A 1x1 GOP_CONV2D whose source is multiplied by a runtime per-channel
       * scale (fuse_conv_source.c): its index in inputs[], 0 if none. */
      int scale_input;
      /* ... and then has a runtime tensor of its shape added: its index
       * in inputs[], 0 if none (only with scale_input). */
      int add_input;
      /* GOP_FC_PAIR (fuse_fc_pair.c) and GOP_PW_DEPTHWISE (fuse_pw_dw.c): the
       * fields above are the second op's (a 1x1, a depthwise); these the
       * first 1x1's constants (bias may be -1), activation and output
       * channels. */
      int first_weights, first_bias, first_act, first_channels;
      /* GOP_PW_DEPTHWISE whose output a MEAN over H and W alone read (batch
       * 1, one band; fuse_pw_dw.c): the tensor the depthwise wrote, whose
       * shape its launch keeps; outputs[0] is the MEAN's. -1 otherwise. */
      int mean_of;
      /* A 1x1 GOP_CONV2D reading inputs[0] through a 2x bilinear upsampling
       * (fuse_conv_source.c): EPI_ADD_UP2 | EPI_UP2_HALF_PIXEL, 0 if none. */
      int src_via;
      /* A GOP_CONV2D reading inputs[0] through a PRELU of constant
       * per-channel (or scalar) alpha (fuse_prelu_source.c): the alpha's
       * index in inputs[], 0 if none. */
      int prelu_input;
    } conv;
    struct {
      int kw, kh, sx, sy, pad_x, pad_y, is_max;
    } pool;
    struct {
      int op;
    } binary;
    struct {
      int op;
      float alpha;
    } unary;
    struct {
      int axis; /* GD_B..GD_C */
    } concat;
    /* Source coordinate on axis a (B, H, W, C): begin[a] + stride[a] *
     * (output coordinate on axis perm[a]), folded by `border`; with
     * `gather`, axis gather_axis instead reads indices (inputs[1]) at
     * sum over output axes d of gather_stride[d] * coordinate[d]. */
    struct {
      int mode;
      int begin[4];  /* B, H, W, C */
      int stride[4];
      int perm[4];
      int border;
      float value;
      int gather, gather_axis;
      int gather_stride[4];
    } remap;
    struct {
      int half_pixel_centers;
      float scale_x, scale_y; /* source pixels per output pixel, as TFLite computes them */
    } resize;
    struct {
      int op;
      int axes[4]; /* B, H, W, C: 1 where reduced */
    } reduce;
    struct {
      int weights, bias; /* constant tensors: weights [O, K] row-major; bias [O] or -1 */
    } fc;
    /* GOP_FC_HEADS (fuse_fc_heads.c): head h's p.fc and activation, for
     * output h (num_outputs heads). */
    struct {
      int weights[GD_MAX_NODE_OUTPUTS], bias[GD_MAX_NODE_OUTPUTS], act[GD_MAX_NODE_OUTPUTS];
    } heads;
    struct {
      int block;
    } depth_to_space;
    struct {
      int radius;
      float bias, alpha, beta;
    } lrn;
    struct {
      float eps; /* layer-norm statistics (fuse_layer_norm.c): rsqrt(variance + eps) */
    } norm;
    struct {
      int block[2]; /* H, W */
      int pad[2];   /* SPACE_TO_BATCH_ND: top, left padding; BATCH_TO_SPACE_ND: top, left crop */
    } space_batch;
    LandmarksMatrixParams l2m;
    struct {
      int dims;    /* 2 or 3 components per landmark */
      float scale; /* multiplies the translation (v1) */
    } landmarks;
    struct {
      int align_corners; /* v2: sample at pixel centres */
    } transform;
    struct {
      float beta;
      int log; /* LOG_SOFTMAX */
    } softmax;
    struct {
      int axis; /* GD_B..GD_C */
      int exclusive, reverse;
    } cumsum;
    struct {
      int adj_x, adj_y;
    } matmul;
    struct {
      int align_corners, half_pixel_centers;
      float scale_x, scale_y;
    } nearest;
    struct {
      int axis;            /* output axis (B, H, W, C) that counts the depth */
      int index_stride[4]; /* per output axis: stride into the row-major indices */
      float on, off;
    } one_hot;
    struct {
      float scale;
      int zero_point, qmin, qmax;
      int mode;   /* GOP_INT8_EXACT: QMODE_* (int8_exact.h) */
      int params; /* GOP_INT8_EXACT: per-channel int32 params (a constant holding their bits), or -1 */
    } quant;
    struct {
      int axis; /* GD_B..GD_C */
      int is_min;
    } arg;
    /* UNIDIRECTIONAL_SEQUENCE_LSTM (gates 4) / _RNN (gates 1): constants
     * packed by the lowering as plain float rows, gate-major. */
    struct {
      int gates, time_major, reverse, cifg, peephole; /* reverse: time runs backwards (bidirectional) */
      float cell_clip;
      int wx, wh, bias; /* [gates][U][I], [gates][U][U], [gates][U] */
      int peep;         /* [3][U] (input, forget, output gates; zeros where absent), or -1 */
    } seq;
  } p;
} GNode;

/* A part of an assembled output (output_assembly.h). */
typedef struct OutPart {
  int output;    /* graph tensor of the assembled output */
  int tensor;    /* a part: a float tensor some kept node writes (or a partition input) */
  size_t offset; /* its first element in the output */
} OutPart;

/* A node the fuse stage removed, and the node now doing its work (TFLite
 * node indices; into -1: none, a layout node an output assembly replaced). */
typedef struct GMerge {
  int gone, into;
} GMerge;

typedef struct Graph {
  GTensor* tensors;
  int num_tensors, cap_tensors;
  GNode* nodes;
  int num_nodes, cap_nodes;
  OutPart* parts;  /* the assembled outputs' parts (output_assembly.c), owned */
  int num_parts, cap_parts;
  GMerge* merged;  /* every node the fuse stage removed (graph_merge), owned; cap: the nodes it started with */
  int num_merged, cap_merged;
} Graph;

int graph_add_tensor(Graph* g, const int shape[4], int rank);  /* -1 on OOM */
GNode* graph_add_node(Graph* g, GOp op);                        /* NULL on OOM */
/* A node of one input and one output. NULL on OOM. */
GNode* graph_add_node_io(Graph* g, GOp op, int in, int out);
void graph_free(Graph* g);
/* Whether t is one of the runtime outputs (never fused away). */
int graph_is_output(int t, const int* outputs, int num_outputs);
/* A 1x1, stride-1, unpadded GOP_CONV2D that reads its source plainly (not
 * scaled or upsampled, fuse_conv_source.c, nor through a PRELU): a GEMM over the pixel plane,
 * what the fusions around 1x1s look for. */
int graph_plain_1x1(const GNode* n);
/* Node n takes the 1x1 node `first` whose output it alone reads as its
 * source: n becomes `op`, reads first's source and holds its constants,
 * activation and output channels (conv.first_*); first is marked in
 * dead[] and reads nothing (fuse_fc_pair.c, fuse_pw_dw.c). */
void graph_take_first_1x1(Graph* g, int n, int first, GOp op, char* dead);
/* Node `gone` is removed, its work now done by node `into` (a position, or
 * -1: by no node): marked in dead[], reads nothing, and recorded in
 * g->merged, so that reports and test hooks can tell which launch computes
 * which TFLite node. */
void graph_merge(Graph* g, int into, int gone, char* dead);
/* The TFLite node whose launch computes TFLite node `node` after the fuse
 * stage (its own index when it was not merged), or -1 (no launch: merged
 * into a boundary conversion). */
int graph_home(const Graph* g, int node);
/* How many nodes read tensor t (each counted once), the last of them in
 * *last_reader. */
int graph_readers(const Graph* g, int t, int* last_reader);
/* The node that writes t, or -1 (a partition input or a constant). */
int graph_writer(const Graph* g, int t);
/* The only live node (dead[k] == 0) reading t, which is not a runtime
 * output, or -1. */
int graph_sole_reader(const Graph* g, int t, const char* dead, const int* outputs, int num_outputs);

static inline size_t shape_elements(const int s[4]) {
  return (size_t)s[0] * (size_t)s[1] * (size_t)s[2] * (size_t)s[3];
}
/* Elements of the PHWC4 form: C rounded up to 4. */
static inline size_t shape_elements_phwc4(const int s[4]) {
  return (size_t)s[0] * (size_t)s[1] * (size_t)s[2] * (size_t)((s[3] + 3) / 4 * 4);
}

/* Work-items of a PHWC4 tensor: one per float4. */
static inline size_t phwc4_items(const int s[4]) {
  return (size_t)s[0] * (size_t)((s[3] + 3) / 4) * (size_t)s[1] * (size_t)s[2];
}

/* Whether a float tensor's PHWC4 bytes begin with its BHWC bytes, element
 * for element: one slice of exactly 4 channels, or a single pixel per
 * batch (B = 1, or C a multiple of 4). */
static inline int phwc4_is_bhwc(const int s[4]) {
  int pixels = s[GD_H] * s[GD_W];
  return s[GD_C] == 4 || (pixels == 1 && (s[GD_B] == 1 || s[GD_C] % 4 == 0));
}

/* Right-aligns TFLite dims (rank <= 4) into BHWC. Returns -1 for rank > 4. */
int shape_from_dims(const int* dims, int rank, int out[4]);
/* Maps a TFLite axis (negative allowed) of a rank-r tensor to GD_B..GD_C. */
int axis_to_bhwc(int axis, int rank);

#endif
